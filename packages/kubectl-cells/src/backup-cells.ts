import { BACKUP_CELL_LABEL, type CellSetSpec } from '@cellfed/api';
import { RoutingTable } from '@cellfed/hashing';

/**
 * The cells that may hold the backup of `namespace/name` under `spec`, in the order to look: for a key of a
 * Down cell, first the cell that took it over (its backup there until it is promoted), then that cell's
 * backup cell (where the promoted object's new backup goes); for any other key, its backup cell. Empty when
 * the federation has one live cell (no backup anywhere).
 */
export function backupCellsOf(
  spec: CellSetSpec,
  ref: { namespace: string; name: string },
  namespaceLabels?: Readonly<Record<string, string>>,
): string[] {
  const table = RoutingTable.fromCellSet(spec);
  const key = table.keyOf(ref, namespaceLabels);
  const serving = table.route(key).oldCell;
  const next = table.backupOf(key, serving);
  const cells = table.failedOverFrom(key) ? [serving, next] : [next];
  return cells.filter((cell): cell is string => cell !== undefined);
}

/**
 * The cell a backup says it is kept in (`cellfed.io/backup-cell-id`), when that is not `cell`, the one it
 * was read from: the context used for `cell` then reaches another cluster, and what it holds is not
 * `cell`'s to show.
 */
export function otherCellOf(
  backup: { metadata?: { labels?: Readonly<Record<string, string>> } },
  cell: string,
): string | undefined {
  const labelled = backup.metadata?.labels?.[BACKUP_CELL_LABEL];
  return labelled !== undefined && labelled !== cell ? labelled : undefined;
}
