import type { CellSetSpec } from '@cellfed/api';

/**
 * The cells of a CellSet that are not Down, in the CellSet's order: those hold objects, serve lists and
 * watches, take moves and follower copies, and are what gates wait for. A Down cell's objects are served
 * from their backups until promoted.
 */
export function liveCells(spec: Pick<CellSetSpec, 'cells'>): string[] {
  return spec.cells.filter((cell) => cell.state !== 'Down').map((cell) => cell.id);
}
