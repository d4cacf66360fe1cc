import { parseCellSetSpec, type CellSetSpec } from '@cellfed/api';
import type { CellState } from '@cellfed/hashing';

/** The cellular resource unit tests move. */
export const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

/** A CellSet spec with ConfigMaps cellular and these cells (Secret named after each cell). */
export function configMapCellSet(states: Record<string, CellState>): CellSetSpec {
  return parseCellSetSpec({
    cellularResources: [CONFIGMAPS],
    cells: Object.entries(states).map(([id, state]) => ({ id, state, kubeconfigSecretRef: { name: id } })),
  });
}
