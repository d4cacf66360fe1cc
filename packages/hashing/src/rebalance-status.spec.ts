import {
  MIGRATED,
  MIGRATING,
  REBALANCE_STATUS_LABEL,
  needsOldCopy,
  resolveTarget,
  type Access,
  type OldCopy,
} from './rebalance-status';
import type { RouteDecision } from './routing-table';

const moving: RouteDecision = { key: 'ns/web', case: 2, oldCell: 'a', newCell: 'b' };
const stable: RouteDecision = { key: 'ns/api', case: 4, oldCell: 'a', newCell: 'a' };
const labelled = (value: string): OldCopy => ({
  found: true,
  labels: { [REBALANCE_STATUS_LABEL]: value, app: 'web' },
});

describe('resolveTarget (the routing rule)', () => {
  it('forwards case 4 to its cell without reading anything', () => {
    expect(needsOldCopy(stable)).toBe(false);
    expect(resolveTarget(stable, 'write')).toEqual({ action: 'forward', cell: 'a', reason: 'stable' });
  });

  it.each<[string, OldCopy, Access, object]>([
    [
      'no label',
      { found: true, labels: { app: 'web' } },
      'write',
      { action: 'forward', cell: 'a', reason: 'not-started' },
    ],
    ['no labels at all', { found: true }, 'read', { action: 'forward', cell: 'a', reason: 'not-started' }],
    [
      'an unknown value',
      labelled('paused'),
      'write',
      { action: 'forward', cell: 'a', reason: 'not-started' },
    ],
    [
      'migrating, read',
      labelled(MIGRATING),
      'read',
      { action: 'forward', cell: 'a', reason: 'migrating-read' },
    ],
    [
      'migrating, write',
      labelled(MIGRATING),
      'write',
      { action: 'fence', cell: 'a', reason: 'migrating-write', retryAfterSeconds: 1 },
    ],
    ['migrated, read', labelled(MIGRATED), 'read', { action: 'forward', cell: 'b', reason: 'migrated' }],
    ['migrated, write', labelled(MIGRATED), 'write', { action: 'forward', cell: 'b', reason: 'migrated' }],
    [
      'not found (a create, or already deleted)',
      { found: false },
      'write',
      { action: 'forward', cell: 'b', reason: 'not-in-old-cell' },
    ],
  ])('cases 1–3 with %s', (_what, oldCopy, access, expected) => {
    expect(needsOldCopy(moving)).toBe(true);
    expect(resolveTarget(moving, access, oldCopy)).toEqual(expected);
  });

  it('uses the caller’s Retry-After', () => {
    expect(resolveTarget(moving, 'write', labelled(MIGRATING), 5)).toMatchObject({
      action: 'fence',
      retryAfterSeconds: 5,
    });
  });

  it('refuses to guess when cases 1–3 come without the old copy', () => {
    expect(() => resolveTarget(moving, 'read')).toThrow(/needs the old copy/);
  });
});
