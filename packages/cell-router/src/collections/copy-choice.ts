import { needsOldCopy, resolveTarget, type RouteDecision } from '@cellfed/hashing';

/** One cell's copy of an object, as a list or watch saw it. */
export interface CellCopy<T> {
  readonly cell: string;
  readonly labels: Readonly<Record<string, string>> | undefined;
  readonly item: T;
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
  return target.action === 'forward' ? copies.find((copy) => copy.cell === target.cell) : undefined;
}
