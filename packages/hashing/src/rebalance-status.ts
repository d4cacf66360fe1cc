import type { RouteDecision } from './routing-table';

/** Label the rebalance controller sets on the old copy of an object it moves. */
export const REBALANCE_STATUS_LABEL = 'cellfed.io/rebalance-status';
/** Value while the object is copied: writes are fenced. */
export const MIGRATING = 'migrating';
/** Value once the new copy is complete: the new cell serves the object. */
export const MIGRATED = 'migrated';

/** Seconds a fenced writer is told to wait before retrying, unless the caller chooses otherwise. */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** Whether a request reads or writes the object. Writes are fenced while the object migrates. */
export type Access = 'read' | 'write';

/** What the router learned from one metadata GET of the object in the old cell. */
export type OldCopy =
  | { readonly found: false }
  | { readonly found: true; readonly labels?: Readonly<Record<string, string>> | undefined };

/** Why a request goes where it goes; for metrics and logs. */
export type TargetReason =
  'stable' | 'not-started' | 'migrating-read' | 'migrating-write' | 'migrated' | 'not-in-old-cell';

/** The outcome of the routing rule for one request. */
export type Target =
  | { readonly action: 'forward'; readonly cell: string; readonly reason: TargetReason }
  | {
      readonly action: 'fence';
      readonly cell: string;
      readonly reason: 'migrating-write';
      readonly retryAfterSeconds: number;
    };

/** True when the rule needs the old copy's metadata (cases 1–3); case 4 never does. */
export function needsOldCopy(decision: RouteDecision): boolean {
  return decision.case !== 4;
}

/**
 * The routing rule for one request:
 * - case 4 → the cell (old = new);
 * - cases 1–3, old copy without the label (or with a value this version does not know) → old cell;
 * - `migrating` → reads to the old cell, writes fenced (answer 429 with Retry-After);
 * - `migrated`, or no old copy → new cell.
 *
 * @param oldCopy - required for cases 1–3 (see {@link needsOldCopy}); ignored for case 4.
 */
export function resolveTarget(
  decision: RouteDecision,
  access: Access,
  oldCopy?: OldCopy,
  retryAfterSeconds: number = DEFAULT_RETRY_AFTER_SECONDS,
): Target {
  if (decision.case === 4) return { action: 'forward', cell: decision.oldCell, reason: 'stable' };
  if (oldCopy === undefined) {
    throw new TypeError(`cellfed: case ${decision.case} needs the old copy's metadata (see needsOldCopy)`);
  }
  if (!oldCopy.found) return { action: 'forward', cell: decision.newCell, reason: 'not-in-old-cell' };
  const status = oldCopy.labels?.[REBALANCE_STATUS_LABEL];
  if (status === MIGRATED) return { action: 'forward', cell: decision.newCell, reason: 'migrated' };
  if (status === MIGRATING) {
    return access === 'read'
      ? { action: 'forward', cell: decision.oldCell, reason: 'migrating-read' }
      : { action: 'fence', cell: decision.oldCell, reason: 'migrating-write', retryAfterSeconds };
  }
  return { action: 'forward', cell: decision.oldCell, reason: 'not-started' };
}
