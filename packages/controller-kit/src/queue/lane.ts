/**
 * Which lane a key waits in (docs/design.md, [T3]): `urgent` for a key a client is waiting on (it was
 * refused until this key's work is done), `high` for user-driven changes, `low` for initial lists, resyncs
 * and scans. A key added to several lanes waits in the most urgent: a user change never waits behind a
 * resync, and a waiting client never behind a bulk of changes.
 */
export type Lane = 'urgent' | 'high' | 'low';

const RANK: Record<Lane, number> = { low: 0, high: 1, urgent: 2 };

/** The more urgent of two lanes. */
export function moreUrgent(a: Lane, b: Lane): Lane {
  return RANK[a] >= RANK[b] ? a : b;
}
