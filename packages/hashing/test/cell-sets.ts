import type { CellSetSpecInput, CellState } from '../src/cell-set';

/** A CellSet spec with the given cells (weight 1 unless given) and a Secret per cell. */
export function specOf(
  cells: ReadonlyArray<readonly [id: string, state: CellState, weight?: number]>,
): CellSetSpecInput {
  return {
    cells: cells.map(([id, state, weight]) => ({
      id,
      state,
      weight: weight ?? 1,
      kubeconfigSecretRef: { name: `${id}-kubeconfig` },
    })),
  };
}
