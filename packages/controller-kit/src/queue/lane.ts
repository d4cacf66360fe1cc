/**
 * Which lane a key waits in (docs/design.md, [T3]): `high` for user-driven changes, `low` for initial
 * lists, resyncs and scans. A key in both is in `high`: a user change never waits behind a resync.
 */
export type Lane = 'high' | 'low';
