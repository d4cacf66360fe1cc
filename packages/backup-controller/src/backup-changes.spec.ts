import { BACKUP_SOURCE_ANNOTATION, PRIMARY_CELL_LABEL, PROMOTION_REQUESTED_ANNOTATION } from '@cellfed/api';
import type { CellState } from '@cellfed/hashing';

import { backupChange } from './backup-changes.ts';

const states: Record<string, CellState> = { a: 'Normal', c: 'Down' };
const stateOf = (cell: string) => states[cell];
const backup = (primary: string, requested: boolean) => ({
  name: 'configmaps-1234',
  labels: { [PRIMARY_CELL_LABEL]: primary },
  annotations: {
    [BACKUP_SOURCE_ANNOTATION]: 'configmaps/team/cfg',
    ...(requested ? { [PROMOTION_REQUESTED_ANNOTATION]: '2026-11-28T06:00:00.000Z' } : {}),
  },
});

describe('backupChange', () => {
  it('looks at the object a backup copies, in the lane the change came in', () => {
    expect(backupChange(backup('c', false), 'high', stateOf)).toEqual({
      key: 'configmaps/team/cfg',
      lane: 'high',
    });
    expect(backupChange(backup('a', false), 'low', stateOf)).toEqual({
      key: 'configmaps/team/cfg',
      lane: 'low',
    });
  });

  it('puts a Down cell’s object a client waits to write before every other promotion', () => {
    expect(backupChange(backup('c', true), 'low', stateOf)).toEqual({
      key: 'configmaps/team/cfg',
      lane: 'urgent',
    });
  });

  it('ignores the mark once the primary is not Down (a stale mark is no reason to hurry)', () => {
    expect(backupChange(backup('a', true), 'high', stateOf)?.lane).toBe('high');
    expect(backupChange(backup('gone', true), 'high', stateOf)?.lane).toBe('high');
  });

  it('says nothing for a backup without a source, or none at all', () => {
    expect(backupChange({ name: 'x', annotations: {} }, 'high', stateOf)).toBeUndefined();
    expect(backupChange(undefined, 'high', stateOf)).toBeUndefined();
  });
});
