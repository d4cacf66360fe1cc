import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL, type RouteDecision } from '@cellfed/hashing';

import { shownCopy, visibleCopy } from './copy-choice.ts';

const moving: RouteDecision = { key: 'ns/x', case: 2, oldCell: 'a', newCell: 'b' };
const copy = (cell: string, status?: string) => ({
  cell,
  labels: status ? { [REBALANCE_STATUS_LABEL]: status } : undefined,
  item: cell,
});

describe('visibleCopy', () => {
  it('shows the old copy until it says migrated, then the new one', () => {
    expect(visibleCopy(moving, [copy('a'), copy('b')])?.cell).toBe('a');
    expect(visibleCopy(moving, [copy('a', MIGRATING), copy('b')])?.cell).toBe('a');
    expect(visibleCopy(moving, [copy('a', MIGRATED), copy('b')])?.cell).toBe('b');
    expect(visibleCopy(moving, [copy('b')])?.cell).toBe('b');
  });

  it('shows the migrated old copy when the new cell’s list was read before the copy existed', () => {
    expect(visibleCopy(moving, [copy('a', MIGRATED)])?.cell).toBe('a');
  });
});

describe('shownCopy', () => {
  const settled: RouteDecision = { key: 'ns/x', case: 1, oldCell: 'a', newCell: 'a' };
  const made = (cell: string, created: string) => ({ ...copy(cell), made: true, created });

  it('shows what a cell’s controllers made from where it is, wherever the ring puts its name', () => {
    expect(shownCopy(settled, [made('c', '2026-11-26T01:00:00Z')])?.cell).toBe('c');
    expect(
      shownCopy(settled, [made('b', '2026-11-26T01:00:00Z'), made('c', '2026-11-26T02:00:00Z')])?.cell,
    ).toBe('c');
  });

  it('prefers the object the ring places to a made one of the same name, and hides leftovers as before', () => {
    expect(shownCopy(settled, [copy('a'), made('c', '2026-11-26T01:00:00Z')])?.cell).toBe('a');
    expect(shownCopy(settled, [copy('b')])).toBeUndefined();
    expect(shownCopy(moving, [copy('a', MIGRATED), copy('b')])?.cell).toBe('b');
  });
});
