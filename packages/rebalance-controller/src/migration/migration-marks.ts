import { COPIED_FROM_ANNOTATION } from '@cellfed/api';

/**
 * What the rebalance controller writes on objects so that every step of a move is recorded on the objects
 * themselves and a new leader resumes where the last one stopped. The old copy's
 * `cellfed.io/rebalance-status` label is the protocol the router reads; the annotations (@cellfed/api's
 * FENCED_AT_ANNOTATION, MIGRATED_AT_ANNOTATION, COPIED_FROM_ANNOTATION) are the controller's own
 * bookkeeping.
 */

/** The cell a new copy was made from while it is not committed (cell ids hold no `/`); undefined after. */
export function copiedFromCell(
  metadata: { annotations?: Record<string, string> } | undefined,
): string | undefined {
  return metadata?.annotations?.[COPIED_FROM_ANNOTATION]?.split('/')[0];
}

/** The field manager of every write the controller makes. */
export const FIELD_MANAGER = 'cellfed-rebalance-controller';
