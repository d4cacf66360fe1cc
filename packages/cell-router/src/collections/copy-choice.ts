import { needsOldCopy, resolveTarget, type RouteDecision } from '@cellfed/hashing';

/** One cell's copy of an object, as a list or watch saw it. */
export interface CellCopy<T> {
  readonly cell: string;
  readonly labels: Readonly<Record<string, string>> | undefined;
  readonly item: T;
  /** Its `metadata.creationTimestamp` (RFC 3339, UTC), where the choice needs it. */
  readonly created?: string | undefined;
  /** Made by its cell's controllers (a native controller reference, as a CronJob's Job has). */
  readonly made?: boolean;
}

/**
 * Which copy of one object a list shows: the one a GET would read (the routing rule). Copies in other
 * cells — the in-progress copy in the new cell, the leftover after a move, every cell's own
 * `default/kubernetes` Service — stay hidden, so nothing appears twice.
 */
export function visibleCopy<T>(
  decision: RouteDecision,
  copies: readonly CellCopy<T>[],
): CellCopy<T> | undefined {
  const old = copies.find((copy) => copy.cell === decision.oldCell);
  const target = resolveTarget(
    decision,
    'read',
    !needsOldCopy(decision) ? undefined : old ? { found: true, labels: old.labels } : { found: false },
  );
  if (target.action !== 'forward') return undefined;
  const chosen = copies.find((copy) => copy.cell === target.cell);
  // The cells' lists are not one snapshot: the new cell's may predate the copy while the old cell's already
  // says `migrated`. Writes were fenced between the two, so the old copy is the object as it moved.
  if (!chosen && target.reason === 'migrated' && old) return old;
  return chosen;
}

/**
 * Which copy of a ring-placed object a list shows: the routing rule's among the copies the ring placed;
 * else one its cell's controllers made (a CronJob's Job, routing/cell-made-resources.ts), which is never
 * moved and belongs where it is, wherever the ring puts its name.
 */
export function shownCopy<T>(
  decision: RouteDecision,
  copies: readonly CellCopy<T>[],
): CellCopy<T> | undefined {
  if (!copies.some((copy) => copy.made)) return visibleCopy(decision, copies);
  return (
    visibleCopy(
      decision,
      copies.filter((copy) => !copy.made),
    ) ?? newestCopy(copies.filter((copy) => copy.made))
  );
}

/**
 * Which copy of a cell-made object (routing/cell-made.ts) is shown when several sources hold one under its
 * name — a ReplicaSet the new cell of a moved Deployment made, while the old cell's is not yet collected:
 * the newest, which stays; the first source's on a tie. kube-apiserver writes creationTimestamp as RFC 3339
 * in UTC at second precision, so the strings compare as the times do.
 */
export function newestCopy<T>(copies: readonly CellCopy<T>[]): CellCopy<T> | undefined {
  let newest: CellCopy<T> | undefined;
  for (const copy of copies) if (!newest || (copy.created ?? '') > (newest.created ?? '')) newest = copy;
  return newest;
}
