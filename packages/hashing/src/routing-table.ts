import type { CellSetSpec, CellState } from './cell-set';
import { hashKey, keyPosition } from './key-hash';
import { objectKey, shardByForNamespace, type ObjectRef } from './object-key';
import { HashRing, type Placement, type RingOptions } from './ring';

/**
 * The four cases of seed 003 for a key, from its cell in ring(CurrentCells) ("old") and in
 * ring(DesiredCells) ("new"):
 * 1. old is Draining, new is Joining — moves out of a leaving cell into a joining one;
 * 2. old is Normal, new is Joining — moves into a joining cell;
 * 3. old is Draining, new is Normal — moves out of a leaving cell;
 * 4. old and new are the same Normal cell — stays.
 * (old and new both Normal but different cannot happen on a consistent-hash ring.)
 */
export type RouteCase = 1 | 2 | 3 | 4;

/** Where a key lives now and where it is going; computed from the CellSet alone. */
export interface RouteDecision {
  readonly key: string;
  readonly case: RouteCase;
  /** The key's cell in ring(CurrentCells = Normal ∪ Draining). */
  readonly oldCell: string;
  /** The key's cell in ring(DesiredCells = Normal ∪ Joining). */
  readonly newCell: string;
}

/**
 * The two rings of a CellSet and the seed-003 routing rule over them. Immutable; build a new table when the
 * CellSet changes and swap it atomically.
 *
 * @example
 * ```ts
 * const table = RoutingTable.fromCellSet(parseCellSet(object).spec);
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
    private readonly defaultShardBy: CellSetSpec['shardBy'],
    /** CurrentCells ∪ Down: where keys were before their cells failed; absent when no cell is Down. */
    private readonly beforeFailureRing: HashRing | undefined,
  ) {}

  /**
   * Builds the table of a validated CellSet spec (see `parseCellSetSpec`). `Down` cells are in neither ring,
   * so their keys go to their backup cells.
   */
  static fromCellSet(spec: CellSetSpec, options: RingOptions = {}): RoutingTable {
    const states = new Map(spec.cells.map((cell) => [cell.id, cell.state] as const));
    const current = spec.cells.filter((cell) => cell.state === 'Normal' || cell.state === 'Draining');
    const desired = spec.cells.filter((cell) => cell.state === 'Normal' || cell.state === 'Joining');
    const currentRing = HashRing.build(current, options);
    // When nothing is joining or draining both rings are the same; share it.
    const desiredRing =
      current.length === desired.length && current.every((cell) => cell.state === 'Normal')
        ? currentRing
        : HashRing.build(desired, options);
    const down = spec.cells.filter((cell) => cell.state === 'Down');
    const beforeFailureRing =
      down.length > 0 && current.length > 0 ? HashRing.build([...current, ...down], options) : undefined;
    return new RoutingTable(currentRing, desiredRing, states, spec.shardBy, beforeFailureRing);
  }

  /** True while some cell is Joining or Draining, i.e. CurrentCells ≠ DesiredCells. */
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

  /** The routing decision for a key: old cell, new cell and the seed's case. */
  route(key: string): RouteDecision {
    hashKey(key);
    const hi = keyPosition[0]!;
    const lo = keyPosition[1]!;
    const oldCell = this.currentRing.ownerAt(hi, lo);
    const newCell = this.desiredRing === this.currentRing ? oldCell : this.desiredRing.ownerAt(hi, lo);
    return { key, case: routeCase(oldCell, newCell, this.states), oldCell, newCell };
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

function routeCase(oldCell: string, newCell: string, states: ReadonlyMap<string, CellState>): RouteCase {
  if (oldCell === newCell) return 4;
  const leaving = states.get(oldCell) === 'Draining';
  const joining = states.get(newCell) === 'Joining';
  if (leaving && joining) return 1;
  if (joining) return 2;
  if (leaving) return 3;
  // Unreachable on a consistent-hash ring: a Normal cell's point is in both rings, and only Joining points
  // can come before it in the desired ring. Reaching this means the two rings were built differently.
  throw new Error(`cellfed: inconsistent rings: "${oldCell}" and "${newCell}" are both Normal for one key`);
}
