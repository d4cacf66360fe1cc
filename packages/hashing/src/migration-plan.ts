import { hashKey, keyPosition } from './key-hash';
import type { HashRing } from './ring';

/** One key that changes cell. */
export interface Move {
  readonly key: string;
  readonly from: string;
  readonly to: string;
}

/** How many keys go from one cell to another. */
export interface Flow {
  readonly from: string;
  readonly to: string;
  readonly count: number;
}

/** Per-cell counts of a plan. A cell missing from a ring has 0 keys on that side. */
export interface CellCounts {
  readonly id: string;
  /** Keys in the cell before the change. */
  readonly before: number;
  /** Keys in the cell after the change. */
  readonly after: number;
  /** Keys moving into the cell. */
  readonly movingIn: number;
  /** Keys moving out of the cell. */
  readonly movingOut: number;
}

/** Which keys move from where to where when the ring changes, and how that compares with the optimum. */
export interface MigrationPlan {
  /** Keys considered. */
  readonly total: number;
  /** Keys whose cell changes. */
  readonly moved: number;
  /** The moves, in input order (empty when `includeMoves` is false). */
  readonly moves: readonly Move[];
  /** Moves aggregated by (from, to), largest first. */
  readonly flows: readonly Flow[];
  /** Counts per cell, by cell id. */
  readonly cells: readonly CellCounts[];
  /**
   * The fewest keys any placement must move for this change: total × Σ max(0, share before − share after),
   * with each cell's share its weight over the ring's total weight.
   */
  readonly optimalMoved: number;
}

/** Options of {@link planMigration}. */
export interface PlanOptions {
  /** List every move (default true); turn off for very large key sets when counts are enough. */
  readonly includeMoves?: boolean;
}

/**
 * Plans a ring change over a set of keys: for each key, its cell on `before` and on `after`.
 * For a CellSet in progress use `table.currentRing` and `table.desiredRing`.
 *
 * @example
 * ```ts
 * const before = HashRing.build(['a', 'b', 'c'].map((id) => ({ id })));
 * const after = HashRing.build(['a', 'b', 'c', 'd'].map((id) => ({ id })));
 * const plan = planMigration(keys, before, after);
 * plan.moved / plan.optimalMoved; // ≈ 1: only the keys d takes over move
 * ```
 */
export function planMigration(
  keys: Iterable<string>,
  before: HashRing,
  after: HashRing,
  options: PlanOptions = {},
): MigrationPlan {
  const includeMoves = options.includeMoves ?? true;
  const counts = new Map<string, { before: number; after: number; movingIn: number; movingOut: number }>();
  const entry = (id: string) => {
    let found = counts.get(id);
    if (!found) {
      found = { before: 0, after: 0, movingIn: 0, movingOut: 0 };
      counts.set(id, found);
    }
    return found;
  };
  for (const cell of before.cells) entry(cell.id);
  for (const cell of after.cells) entry(cell.id);

  const moves: Move[] = [];
  const flows = new Map<string, Flow & { count: number }>();
  let total = 0;
  let moved = 0;
  for (const key of keys) {
    hashKey(key);
    const hi = keyPosition[0]!;
    const lo = keyPosition[1]!;
    const from = before.ownerAt(hi, lo);
    const to = after.ownerAt(hi, lo);
    total++;
    entry(from).before++;
    entry(to).after++;
    if (from === to) continue;
    moved++;
    entry(from).movingOut++;
    entry(to).movingIn++;
    if (includeMoves) moves.push({ key, from, to });
    const flowKey = `${from}\u0000${to}`;
    const flow = flows.get(flowKey);
    if (flow) flow.count++;
    else flows.set(flowKey, { from, to, count: 1 });
  }

  return {
    total,
    moved,
    moves,
    flows: [...flows.values()].sort((a, b) => b.count - a.count || byId(a.from, b.from) || byId(a.to, b.to)),
    cells: [...counts.entries()].sort(([a], [b]) => byId(a, b)).map(([id, c]) => ({ id, ...c })),
    optimalMoved: total * optimalMovedFraction(before, after),
  };
}

/** Cell ids in a fixed, locale-independent order. */
function byId(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Σ over cells of max(0, weight share before − weight share after). */
export function optimalMovedFraction(before: HashRing, after: HashRing): number {
  const shareOf = (ring: HashRing) => {
    const totalWeight = ring.cells.reduce((sum, cell) => sum + cell.weight, 0);
    return new Map(ring.cells.map((cell) => [cell.id, cell.weight / totalWeight]));
  };
  const a = shareOf(before);
  const b = shareOf(after);
  let fraction = 0;
  for (const [id, share] of a) fraction += Math.max(0, share - (b.get(id) ?? 0));
  return fraction;
}
