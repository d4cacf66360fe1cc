import type { CellState } from '../src/cell-states';
import type { RoutingCells } from '../src/routing-table';

/** A cell set with the given cells (weight 1 unless given), keyed by name as a CellSet is by default. */
export function specOf(
  cells: ReadonlyArray<readonly [id: string, state: CellState, weight?: number]>,
): RoutingCells {
  return {
    cells: cells.map(([id, state, weight]) => ({ id, state, weight: weight ?? 1 })),
    shardBy: 'name',
  };
}
