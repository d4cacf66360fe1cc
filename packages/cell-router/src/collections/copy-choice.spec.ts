import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL, type RouteDecision } from '@cellfed/hashing';

import { visibleCopy } from './copy-choice.ts';

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
