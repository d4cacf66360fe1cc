import { shareStep } from './quota-names.ts';

/** Quantities in nano-units by resource name (see quantity.ts). */
export type Amounts = ReadonlyMap<string, bigint>;

/** One cell's copy of a quota, as the division of its limits reads it. */
export interface ShareHolder {
  readonly cell: string;
  /** The share its copy records; undefined while the cell has no copy. */
  readonly share: Amounts | undefined;
  /** What the cell uses of the federation's (its copy's `status.used` less its own objects); undefined until counted. */
  readonly used: Amounts | undefined;
  /** When (ms) a share was last drawn from this copy for another cell. */
  readonly drawnAt: number | undefined;
}

export interface Settled {
  /** Each cell's share after settling, by cell id. */
  readonly shares: ReadonlyMap<string, Amounts>;
  /** Set when a shortfall was held back for a recent draw: settle again after this long. */
  readonly retryAfterMs: number | undefined;
}

/**
 * Divides a quota's limits among cells so that their shares never add up to more than the limit:
 * - a name no cell has a share of yet (a new quota, a new name) is split evenly, in {@link shareStep}s;
 * - a surplus (the limit was lowered, a cell's share was too large) is cut first from the cells with the most
 *   unused share, then from the largest shares: a share below its use admits nothing more, as a limit below
 *   its use does on one apiserver;
 * - a shortfall (a cell left, a limit was raised, a draw did not finish) is handed out evenly — but not
 *   while a draw younger than `settleMs` may still be giving it to its cell, which would hand it out twice;
 * - the unused part of a limit is divided again, evenly, once a cell has used more than half of its even
 *   part of it (and every cell's use is counted): a cell whose own controllers make what the quota counts (a
 *   ReplicaSet's pods after a move) gets share before it runs out, with no write to draw it. A cell keeps
 *   what it drew until the draw's `settleMs` has passed.
 * The result never adds up to more than a limit; written lowest first (see the quota reconciler), no
 * moment between the writes does either.
 */
export function settleShares(
  limits: Amounts,
  holders: readonly ShareHolder[],
  now: number,
  settleMs: number,
): Settled {
  const cells = [...holders].sort((a, b) => a.cell.localeCompare(b.cell));
  const shares = new Map(cells.map((holder) => [holder.cell, new Map<string, bigint>()]));
  const latestDraw = Math.max(-Infinity, ...cells.map((holder) => holder.drawnAt ?? -Infinity));
  const drawPending = now - latestDraw < settleMs;
  let retryAfterMs: number | undefined;
  for (const [name, limit] of limits) {
    // A cell that admitted more than its share (while a draw lowered it, or a limit was lowered below use)
    // holds what it uses: handing out the difference again would admit it twice.
    const current = new Map(
      cells.map((holder) => {
        const share = holder.share?.get(name) ?? 0n;
        const used = holder.used?.get(name);
        return [holder.cell, used !== undefined && used > share ? used : share];
      }),
    );
    const allocated = sum(current.values());
    if (allocated > limit) cut(name, current, cells, allocated - limit);
    else if (allocated < limit) {
      const unknownToAll = cells.every((holder) => holder.share?.get(name) === undefined);
      if (!drawPending || unknownToAll) spread(name, current, limit - allocated);
      else retryAfterMs = latestDraw + settleMs - now;
    } else if (!drawPending) rebalance(name, current, cells, limit);
    for (const [cell, share] of current) shares.get(cell)!.set(name, share);
  }
  return { shares, retryAfterMs };
}

/** The free share (limit less use) each other copy gives up to `to`, for every name `to` has a limit of. */
export interface DrawHolder {
  readonly cell: string;
  /** The copy's enforced limits (`status.hard`, what the cell's admission checks). */
  readonly hard: Amounts;
  /** The copy's `status.used`. */
  readonly used: Amounts;
}

/** For each cell other than `to`: what to take from it of `wanted` (all names `to` limits by default). */
export function drawFrom(
  holders: readonly DrawHolder[],
  to: string,
  wanted?: readonly string[],
): Map<string, Map<string, bigint>> {
  const limited = [...(holders.find((holder) => holder.cell === to)?.hard.keys() ?? [])];
  const names = wanted ? limited.filter((name) => wanted.includes(name)) : limited;
  const takes = new Map<string, Map<string, bigint>>();
  for (const holder of holders) {
    if (holder.cell === to) continue;
    const take = new Map<string, bigint>();
    for (const name of names) {
      const hard = holder.hard.get(name);
      if (hard === undefined) continue;
      const free = hard - (holder.used.get(name) ?? 0n);
      if (free > 0n) take.set(name, free);
    }
    if (take.size > 0) takes.set(holder.cell, take);
  }
  return takes;
}

function cut(
  name: string,
  current: Map<string, bigint>,
  cells: readonly ShareHolder[],
  surplus: bigint,
): void {
  let left = surplus;
  const free = (holder: ShareHolder) => current.get(holder.cell)! - (holder.used?.get(name) ?? 0n);
  for (const holder of [...cells].sort((a, b) => compare(free(b), free(a)))) {
    if (left === 0n) return;
    const take = min(left, max(0n, free(holder)));
    current.set(holder.cell, current.get(holder.cell)! - take);
    left -= take;
  }
  for (const holder of [...cells].sort((a, b) => compare(current.get(b.cell)!, current.get(a.cell)!))) {
    if (left === 0n) return;
    const take = min(left, current.get(holder.cell)!);
    current.set(holder.cell, current.get(holder.cell)! - take);
    left -= take;
  }
}

/**
 * Divides the unused part of the limit evenly again when some cell has less than half its even part of it
 * left (a band, so that not every use rewrites every share).
 */
function rebalance(
  name: string,
  current: Map<string, bigint>,
  cells: readonly ShareHolder[],
  limit: bigint,
): void {
  if (cells.some((holder) => holder.used?.get(name) === undefined)) return;
  const used = new Map(cells.map((holder) => [holder.cell, holder.used!.get(name)!]));
  const unused = limit - sum(used.values());
  if (unused <= 0n) return;
  const target = new Map(used);
  spread(name, target, unused);
  const low = cells.some((holder) => {
    const left = current.get(holder.cell)! - used.get(holder.cell)!;
    const even = target.get(holder.cell)! - used.get(holder.cell)!;
    return even > 0n && left * 2n < even;
  });
  if (low) for (const [cell, share] of target) current.set(cell, share);
}

/** Hands `amount` out evenly in steps of the name's {@link shareStep}, the odd steps to the first cells. */
function spread(name: string, current: Map<string, bigint>, amount: bigint): void {
  const cells = [...current.keys()];
  if (cells.length === 0) return;
  const step = shareStep(name);
  const steps = amount / step;
  const each = steps / BigInt(cells.length);
  let odd = steps % BigInt(cells.length);
  let rest = amount - steps * step;
  for (const cell of cells) {
    let give = each * step;
    if (odd > 0n) {
      give += step;
      odd--;
    }
    // What is finer than a step (a limit of 1.5 pods) goes to the first cell.
    give += rest;
    rest = 0n;
    current.set(cell, current.get(cell)! + give);
  }
}

const sum = (values: Iterable<bigint>): bigint => [...values].reduce((total, value) => total + value, 0n);
const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);
const compare = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);
