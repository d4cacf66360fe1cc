import { BACKUP_SOURCE_ANNOTATION, PRIMARY_CELL_LABEL, PROMOTION_REQUESTED_ANNOTATION } from '@cellfed/api';
import type { CellState } from '@cellfed/hashing';
import type { Lane } from '@cellfed/controller-kit';
import type { ObjectMeta } from '@cellfed/federation';

/**
 * What a change to a CellBackup asks of the backup controller: a look at the object it copies (its key), in
 * the lane the change came in, except that a backup the router marked because a client waits to write its
 * Down cell's object (PROMOTION_REQUESTED_ANNOTATION) goes before every other promotion. A backup without a
 * source says nothing.
 */
export function backupChange(
  backup: Readonly<ObjectMeta> | undefined,
  lane: Lane,
  stateOf: (cell: string) => CellState | undefined,
): { key: string; lane: Lane } | undefined {
  const key = backup?.annotations?.[BACKUP_SOURCE_ANNOTATION];
  if (!key) return undefined;
  const waitedOn =
    backup.annotations?.[PROMOTION_REQUESTED_ANNOTATION] !== undefined &&
    stateOf(backup.labels?.[PRIMARY_CELL_LABEL] ?? '') === 'Down';
  return { key, lane: waitedOn ? 'urgent' : lane };
}
