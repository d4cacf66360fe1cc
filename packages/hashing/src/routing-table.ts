import type { CellState } from './cell-states';
import { hashKey, keyPosition } from './key-hash';
import { objectKey, shardByForNamespace, type ObjectRef, type ShardBy } from './object-key';
import { HashRing, type Placement, type RingOptions } from './ring';

/**
 * The four cases of the routing rule for a key, from its cell in ring(CurrentCells) ("old") and in
 * ring(DesiredCells) ("new"):
 * 1. old is Draining, new is Joining — moves out of a leaving cell into a joining one;
 * 2. old is Normal, new is Joining — moves into a joining cell;
 * 3. old is Draining, new is Normal — moves out of a leaving cell;
 * 4. old and new are the same Normal cell — stays;
 * 5. old and new are different Normal cells — a cell's weight is changing (cellfed's addition: a weight
 *    change moves keys to or from that cell only, routed as case 2 or 3 is).
 * (Different Normal cells for one key without a weight change cannot happen on a consistent-hash ring.)
 */
export type RouteCase = 1 | 2 | 3 | 4 | 5;

/** Where a key lives now and where it is going; computed from the CellSet alone. */
export interface RouteDecision {
  readonly key: string;
  readonly case: RouteCase;
  /** The key's cell in ring(CurrentCells = Normal ∪ Draining). */
  readonly oldCell: string;
  /** The key's cell in ring(DesiredCells = Normal ∪ Joining). */
  readonly newCell: string;
}

/** A cell as the routing rule reads it. */
export interface RoutingCell {
  readonly id: string;
  readonly state: CellState;
  /** Its share of the ring: an integer from 1 to the ring's `MAX_WEIGHT`. */
  readonly weight: number;
  /** While its weight changes: the weight objects are placed by until the change is done. */
  readonly previousWeight?: number | undefined;
}

/**
 * What the routing rule reads of a federation's cell set: its cells and how objects are keyed. A
 * validated CellSet spec (@cellfed/api's `parseCellSetSpec`) is one.
 */
export interface RoutingCells {
  readonly cells: readonly RoutingCell[];
  /** How an object's key is made unless its namespace says otherwise. */
  readonly shardBy: ShardBy;
}

/**
 * The two rings of a CellSet and the routing rule over them. Immutable; build a new table when the
 * CellSet changes and swap it atomically.
 *
 * @example
 * ```ts
 * const table = RoutingTable.fromCellSet({
 *   cells: [{ id: 'cell-1', state: 'Normal', weight: 1 }, { id: 'cell-2', state: 'Joining', weight: 1 }],
 *   shardBy: 'namespace',
 * });
 * const decision = table.route(table.keyOf({ namespace: 'shop', name: 'web' }));
 * if (decision.case === 4) forwardTo(decision.oldCell);
 * ```
 */
export class RoutingTable {
  private constructor(
    /** The ring of CurrentCells = Normal ∪ Draining: where objects are now. */
    readonly currentRing: HashRing,
    /** The ring of DesiredCells = Normal ∪ Joining: where objects belong once rebalanced. */
    readonly desiredRing: HashRing,
    private readonly states: ReadonlyMap<string, CellState>,
    private readonly defaultShardBy: ShardBy,
    /** CurrentCells ∪ Down: where keys were before their cells failed; absent when no cell is Down. */
    private readonly beforeFailureRing: HashRing | undefined,
    /** The cells whose weight is changing (they have a `previousWeight`). */
    private readonly reweighting: ReadonlySet<string>,
  ) {}

  /**
   * Builds the table of a cell set (a validated CellSet spec is one). `Down` cells are in neither ring, so
   * their keys go to their backup cells.
   */
  static fromCellSet(spec: RoutingCells, options: RingOptions = {}): RoutingTable {
    const states = new Map(spec.cells.map((cell) => [cell.id, cell.state] as const));
    // CurrentCells at the weights objects are placed by now: a cell changing weight keeps its previous one.
    const current = spec.cells
      .filter((cell) => cell.state === 'Normal' || cell.state === 'Draining')
      .map((cell) => ({ id: cell.id, weight: cell.previousWeight ?? cell.weight }));
    const desired = spec.cells.filter((cell) => cell.state === 'Normal' || cell.state === 'Joining');
    const currentRing = HashRing.build(current, options);
    // When nothing is joining, draining or changing weight both rings are the same; share it.
    const desiredRing = spec.cells.every(
      (cell) => cell.state !== 'Joining' && cell.state !== 'Draining' && cell.previousWeight === undefined,
    )
      ? currentRing
      : HashRing.build(desired, options);
    const down = spec.cells.filter((cell) => cell.state === 'Down').map(({ id, weight }) => ({ id, weight }));
    const beforeFailureRing =
      down.length > 0 && current.length > 0 ? HashRing.build([...current, ...down], options) : undefined;
    const reweighting = new Set(
      spec.cells.filter((cell) => cell.previousWeight !== undefined).map((cell) => cell.id),
    );
    return new RoutingTable(currentRing, desiredRing, states, spec.shardBy, beforeFailureRing, reweighting);
  }

  /** True while some cell is Joining, Draining or changing weight, i.e. the two rings differ. */
  get rebalancing(): boolean {
    return this.currentRing !== this.desiredRing;
  }

  /** The state of a cell, or `undefined` if the CellSet does not list it. */
  stateOf(cellId: string): CellState | undefined {
    return this.states.get(cellId);
  }

  /**
   * The key of an object under this CellSet: its `shardBy`, overridden per namespace by the namespace's
   * `cellfed.io/shard-by` label (pass the namespace's labels when known).
   */
  keyOf(ref: ObjectRef, namespaceLabels?: Readonly<Record<string, string>>): string {
    return objectKey(ref, shardByForNamespace(this.defaultShardBy, namespaceLabels));
  }

  /** The routing decision for a key: old cell, new cell and the case. */
  route(key: string): RouteDecision {
    hashKey(key);
    const hi = keyPosition[0]!;
    const lo = keyPosition[1]!;
    const oldCell = this.currentRing.ownerAt(hi, lo);
    const newCell = this.desiredRing === this.currentRing ? oldCell : this.desiredRing.ownerAt(hi, lo);
    return { key, case: routeCase(oldCell, newCell, this.states, this.reweighting), oldCell, newCell };
  }

  /**
   * The `Down` cell the key belonged to, when it did: its owner on the ring of CurrentCells ∪ Down. Such a
   * key is served by its backup cell (`route(key).oldCell`, the next cell clockwise), where its backup is
   * promoted to the real object. `undefined` for every key when no cell is Down.
   */
  failedOverFrom(key: string): string | undefined {
    if (!this.beforeFailureRing) return undefined;
    const owner = this.beforeFailureRing.lookup(key);
    return this.states.get(owner) === 'Down' ? owner : undefined;
  }

  /**
   * Where the backup of a key lives while the key's object is in `primary`: the next distinct cell clockwise
   * on the ring `primary` owns the key on (CurrentCells, else DesiredCells for an object already moved into a
   * joining cell) — the cell the key goes to if `primary` goes Down. `undefined` when the ring has one cell,
   * or `primary` owns the key on neither ring (a copy about to move or be deleted needs no backup).
   */
  backupOf(key: string, primary: string): string | undefined {
    const current = this.currentRing.locate(key);
    if (current.primary === primary) return current.backup;
    if (this.desiredRing === this.currentRing) return undefined;
    const desired = this.desiredRing.locate(key);
    return desired.primary === primary ? desired.backup : undefined;
  }

  /** Primary and backup of a key among CurrentCells. */
  locateCurrent(key: string): Placement {
    return this.currentRing.locate(key);
  }

  /** Primary and backup of a key among DesiredCells. */
  locateDesired(key: string): Placement {
    return this.desiredRing.locate(key);
  }
}

function routeCase(
  oldCell: string,
  newCell: string,
  states: ReadonlyMap<string, CellState>,
  reweighting: ReadonlySet<string>,
): RouteCase {
  if (oldCell === newCell) return 4;
  const leaving = states.get(oldCell) === 'Draining';
  const joining = states.get(newCell) === 'Joining';
  if (leaving && joining) return 1;
  if (joining) return 2;
  if (leaving) return 3;
  // Both Normal: only a weight change moves a key between two Normal cells (it adds or removes that cell's
  // points alone). Anything else means the two rings were built differently.
  if (reweighting.has(oldCell) || reweighting.has(newCell)) return 5;
  throw new Error(`cellfed: inconsistent rings: "${oldCell}" and "${newCell}" are both Normal for one key`);
}
