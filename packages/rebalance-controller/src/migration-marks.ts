/**
 * What the rebalance controller writes on objects so that every step of a move is recorded on the objects
 * themselves and a new leader resumes where the last one stopped. The old copy's
 * `cellfed.io/rebalance-status` label (from @cellfed/hashing) is the protocol the router reads; these
 * annotations are the controller's own bookkeeping.
 */

/**
 * On the old copy, set with `migrating`: when the write fence went up; set with `migrated`: when the new
 * copy took over (the old copy is deleted `deleteAfter` later). The cells' fence policy requires them.
 */
export { FENCED_AT_ANNOTATION, MIGRATED_AT_ANNOTATION } from '@cellfed/controller-kit';
/**
 * On a new copy until the old copy is labelled `migrated`: `cell/uid` of the copy it was made from. A copy
 * that still carries it is not committed: if its source is gone (deleted by a user mid-migration) it goes too.
 */
import { COPIED_FROM_ANNOTATION } from '@cellfed/controller-kit';

export { COPIED_FROM_ANNOTATION };

/** The cell a new copy was made from while it is not committed (cell ids hold no `/`); undefined after. */
export function copiedFromCell(
  metadata: { annotations?: Record<string, string> } | undefined,
): string | undefined {
  return metadata?.annotations?.[COPIED_FROM_ANNOTATION]?.split('/')[0];
}

/** The field manager of every write the controller makes. */
export const FIELD_MANAGER = 'cellfed-rebalance-controller';
