import { HashingError, HashingErrorCode } from './errors';
import { encodeKey, keyBuffer } from './key-bytes';
import { hashKey, keyPosition } from './key-hash';
import { splitmix64Fill } from './splitmix64';
import { xxh64Into } from './xxhash64';

/** A cell as the ring sees it: an id and a relative capacity. */
export interface RingCell {
  /** Unique, non-empty id. */
  readonly id: string;
  /** Relative capacity, an integer from 1 to {@link MAX_WEIGHT}; defaults to 1. */
  readonly weight?: number;
}

/** Options of {@link HashRing.build}. Every process that must agree on placement must use the same ones. */
export interface RingOptions {
  /** Virtual-node points per unit of weight; defaults to {@link DEFAULT_POINTS_PER_WEIGHT}. */
  readonly pointsPerWeight?: number;
}

/** A key's primary cell and backup cell. */
export interface Placement {
  /** The cell that owns the key. */
  readonly primary: string;
  /** The next distinct cell clockwise; `undefined` when the ring has a single cell. */
  readonly backup: string | undefined;
}

/**
 * Points per unit of weight unless configured. Chosen for balance: the load of a cell with p random points
 * deviates from its fair share by about 1/sqrt(p), so 2048 keeps 10 equal cells within about 5% of the mean.
 */
export const DEFAULT_POINTS_PER_WEIGHT = 2048;
/** Largest weight a cell may have. */
export const MAX_WEIGHT = 1000;
/** Most points a ring may hold (memory: 10 bytes per point). */
export const MAX_POINTS = 1 << 24;
/** Most cells a ring may hold. */
export const MAX_CELLS = 0xfffe;

const NO_CELL = 0xffff;
const seedScratch = new Uint32Array(2);

/**
 * A weighted consistent-hash ring of virtual nodes on a 64-bit hash. Immutable; build a new one to change it.
 *
 * Cell `c` of weight `w` owns `w × pointsPerWeight` points, the first outputs of SplitMix64 seeded with
 * XXH64(c). A key belongs to the first point at or after XXH64(key), wrapping around; its backup is the next
 * point clockwise owned by another cell, which is exactly where the key goes when its primary is removed.
 * The package README specifies the algorithm completely.
 *
 * @example
 * ```ts
 * const ring = HashRing.build([{ id: 'a' }, { id: 'b', weight: 2 }]);
 * ring.lookup('default/web');   // 'a' or 'b', the same in every process
 * ring.locate('default/web');   // { primary, backup }
 * ```
 */
export class HashRing {
  private constructor(
    /** The cells, sorted by id. */
    readonly cells: readonly Required<RingCell>[],
    private readonly ids: readonly string[],
    private readonly posHi: Uint32Array,
    private readonly posLo: Uint32Array,
    private readonly owner: Uint16Array,
    private readonly nextOtherOwner: Uint16Array,
    private readonly bucketShift: number,
    private readonly bucketStart: Uint32Array,
    /** The options the ring was built with, defaults applied. */
    readonly options: Required<RingOptions>,
  ) {}

  /**
   * Builds a ring. The order of `cells` does not matter.
   * @throws {@link HashingError} `CELLFED_EMPTY_RING`, `CELLFED_DUPLICATE_CELL`, `CELLFED_INVALID_CELL_ID`,
   *   `CELLFED_INVALID_WEIGHT`, `CELLFED_INVALID_RING_OPTION` or `CELLFED_RING_TOO_LARGE`.
   */
  static build(cells: Iterable<RingCell>, options: RingOptions = {}): HashRing {
    const pointsPerWeight = options.pointsPerWeight ?? DEFAULT_POINTS_PER_WEIGHT;
    if (!Number.isSafeInteger(pointsPerWeight) || pointsPerWeight < 1 || pointsPerWeight > MAX_POINTS) {
      throw new HashingError(
        HashingErrorCode.InvalidRingOption,
        `pointsPerWeight must be an integer from 1 to ${MAX_POINTS}, got ${String(pointsPerWeight)}`,
      );
    }
    const sorted = normalizeCells(cells);
    let total = 0;
    for (const cell of sorted) total += cell.weight * pointsPerWeight;
    if (total > MAX_POINTS) {
      throw new HashingError(
        HashingErrorCode.RingTooLarge,
        `the ring would hold ${total} points, more than ${MAX_POINTS}; lower the weights or pointsPerWeight`,
      );
    }

    // Points in the order (cell id, replica); the stable sort below keeps that order among equal positions.
    const hi = new Uint32Array(total);
    const lo = new Uint32Array(total);
    const ownerUnsorted = new Uint16Array(total);
    let at = 0;
    sorted.forEach((cell, index) => {
      const count = cell.weight * pointsPerWeight;
      xxh64Into(keyBuffer(), encodeKey(cell.id), seedScratch);
      splitmix64Fill(seedScratch[0]!, seedScratch[1]!, count, hi, lo, at);
      ownerUnsorted.fill(index, at, at + count);
      at += count;
    });

    const order = sortByPosition(hi, lo);
    const posHi = new Uint32Array(total);
    const posLo = new Uint32Array(total);
    const owner = new Uint16Array(total);
    for (let i = 0; i < total; i++) {
      const from = order[i]!;
      posHi[i] = hi[from]!;
      posLo[i] = lo[from]!;
      owner[i] = ownerUnsorted[from]!;
    }
    const bucketBits = Math.min(20, Math.max(4, Math.ceil(Math.log2(total))));
    return new HashRing(
      sorted,
      sorted.map((c) => c.id),
      posHi,
      posLo,
      owner,
      nextOtherOwners(owner, sorted.length),
      32 - bucketBits,
      bucketStarts(posHi, bucketBits),
      { pointsPerWeight },
    );
  }

  /** Number of virtual-node points on the ring. */
  get pointCount(): number {
    return this.posHi.length;
  }

  /** Whether a cell with this id is on the ring. */
  has(cellId: string): boolean {
    return this.ids.includes(cellId);
  }

  /** The cell that owns `key`. */
  lookup(key: string): string {
    hashKey(key);
    return this.ownerAt(keyPosition[0]!, keyPosition[1]!);
  }

  /**
   * The key's backup cell: the next distinct cell clockwise from its primary point. Equals
   * `lookup(key)` on this ring without the primary. `undefined` when the ring has one cell.
   */
  backup(key: string): string | undefined {
    return this.locate(key).backup;
  }

  /** Primary and backup of `key`, hashing it once. */
  locate(key: string): Placement {
    hashKey(key);
    const index = this.pointIndexAt(keyPosition[0]!, keyPosition[1]!);
    const next = this.nextOtherOwner[index]!;
    return { primary: this.ids[this.owner[index]!]!, backup: next === NO_CELL ? undefined : this.ids[next] };
  }

  /**
   * The first `count` distinct cells clockwise from the key's position: primary, backup, and so on.
   * Returns fewer when the ring has fewer cells.
   */
  successors(key: string, count: number): string[] {
    hashKey(key);
    const start = this.pointIndexAt(keyPosition[0]!, keyPosition[1]!);
    const found: string[] = [];
    const seen = new Set<number>();
    const n = this.owner.length;
    const want = Math.min(count, this.ids.length);
    for (let step = 0; step < n && found.length < want; step++) {
      const cell = this.owner[(start + step) % n]!;
      if (!seen.has(cell)) {
        seen.add(cell);
        found.push(this.ids[cell]!);
      }
    }
    return found;
  }

  /**
   * Each cell's exact share of the hash space (the arcs its points own), summing to 1.
   * Expected share = weight / total weight; the difference is the ring's imbalance.
   */
  shares(): Map<string, number> {
    const n = this.posHi.length;
    const arc = new Float64Array(this.ids.length);
    const TWO_32 = 4294967296;
    for (let i = 0; i < n; i++) {
      const prev = i === 0 ? n - 1 : i - 1;
      let length = (this.posHi[i]! - this.posHi[prev]!) * TWO_32 + (this.posLo[i]! - this.posLo[prev]!);
      if (i === 0) length += TWO_32 * TWO_32;
      arc[this.owner[i]!]! += length;
    }
    const result = new Map<string, number>();
    this.ids.forEach((id, index) => result.set(id, arc[index]! / (TWO_32 * TWO_32)));
    return result;
  }

  /** Index of the first point at or after (hi, lo), wrapping to 0. @internal */
  pointIndexAt(hi: number, lo: number): number {
    // The bucket of the position's top bits holds about one point, so this scans a point or two instead of
    // a binary search whose unpredictable branches cost more than the hash itself.
    const posHi = this.posHi;
    const posLo = this.posLo;
    const bucket = hi >>> this.bucketShift;
    let i = this.bucketStart[bucket]!;
    const end = this.bucketStart[bucket + 1]!;
    while (i < end && (posHi[i]! < hi || (posHi[i] === hi && posLo[i]! < lo))) i++;
    return i === posHi.length ? 0 : i;
  }

  /** Id of the cell that owns the ring position (hi, lo). @internal */
  ownerAt(hi: number, lo: number): string {
    return this.ids[this.owner[this.pointIndexAt(hi, lo)]!]!;
  }
}

function normalizeCells(cells: Iterable<RingCell>): Required<RingCell>[] {
  const result: Required<RingCell>[] = [];
  const seen = new Set<string>();
  for (const cell of cells) {
    if (typeof cell.id !== 'string' || cell.id.length === 0) {
      throw new HashingError(HashingErrorCode.InvalidCellId, `a cell id must be a non-empty string`);
    }
    if (seen.has(cell.id)) {
      throw new HashingError(HashingErrorCode.DuplicateCell, `cell "${cell.id}" appears more than once`);
    }
    seen.add(cell.id);
    const weight = cell.weight ?? 1;
    if (!Number.isInteger(weight) || weight < 1 || weight > MAX_WEIGHT) {
      throw new HashingError(
        HashingErrorCode.InvalidWeight,
        `cell "${cell.id}": weight must be an integer from 1 to ${MAX_WEIGHT}, got ${String(weight)}`,
      );
    }
    result.push({ id: cell.id, weight });
  }
  if (result.length === 0) {
    throw new HashingError(HashingErrorCode.EmptyRing, 'a ring needs at least one cell');
  }
  if (result.length > MAX_CELLS) {
    throw new HashingError(HashingErrorCode.RingTooLarge, `a ring holds at most ${MAX_CELLS} cells`);
  }
  return result.sort((a, b) => compareCodePoints(a.id, b.id));
}

/** Orders strings by Unicode code points, which is the order of their UTF-8 bytes. */
function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done === y.done ? 0 : x.done ? -1 : 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx - cy;
  }
}

/** Stable LSD radix sort of point indices by 64-bit position, 16 bits a pass. */
function sortByPosition(hi: Uint32Array, lo: Uint32Array): Uint32Array {
  const n = hi.length;
  let src = new Uint32Array(n);
  let dst = new Uint32Array(n);
  for (let i = 0; i < n; i++) src[i] = i;
  const count = new Uint32Array(65537);
  for (let pass = 0; pass < 4; pass++) {
    const words = pass < 2 ? lo : hi;
    const shift = pass % 2 === 0 ? 0 : 16;
    count.fill(0);
    for (let i = 0; i < n; i++) count[((words[src[i]!]! >>> shift) & 0xffff) + 1]!++;
    for (let d = 0; d < 65536; d++) count[d + 1]! += count[d]!;
    for (let i = 0; i < n; i++) {
      const index = src[i]!;
      dst[count[(words[index]! >>> shift) & 0xffff]!++] = index;
    }
    [src, dst] = [dst, src];
  }
  return src;
}

/** bucketStart[b] = index of the first point whose top `bits` bits are >= b; one extra entry = point count. */
function bucketStarts(posHi: Uint32Array, bits: number): Uint32Array {
  const buckets = 2 ** bits;
  const shift = 32 - bits;
  const start = new Uint32Array(buckets + 1);
  let i = 0;
  for (let b = 0; b < buckets; b++) {
    while (i < posHi.length && posHi[i]! >>> shift < b) i++;
    start[b] = i;
  }
  start[buckets] = posHi.length;
  return start;
}

/** For each point, the owner of the next point clockwise that belongs to another cell. */
function nextOtherOwners(owner: Uint16Array, cellCount: number): Uint16Array {
  const n = owner.length;
  const next = new Uint16Array(n).fill(NO_CELL);
  if (cellCount < 2) return next;
  // Two backward passes so the answer wraps around the end of the ring.
  for (let j = 2 * n - 1; j >= 0; j--) {
    const i = j % n;
    const after = (i + 1) % n;
    next[i] = owner[after] !== owner[i] ? owner[after]! : next[after]!;
  }
  return next;
}
