import { parseCellSetSpec } from '@cellfed/api';
import { RoutingTable } from '@cellfed/hashing';

import { backupCellsOf, otherCellOf } from './backup-cells.ts';

const spec = (states: Record<string, 'Normal' | 'Down'>) =>
  parseCellSetSpec({
    cells: Object.entries(states).map(([id, state]) => ({ id, state, kubeconfigSecretRef: { name: id } })),
  });

describe('backupCellsOf', () => {
  it('is the next cell clockwise for a key served by a live cell', () => {
    const healthy = spec({ a: 'Normal', b: 'Normal', c: 'Normal' });
    const table = RoutingTable.fromCellSet(healthy);
    for (let i = 0; i < 20; i++) {
      const ref = { namespace: 'shop', name: `web-${i}` };
      const key = table.keyOf(ref);
      const cells = backupCellsOf(healthy, ref);
      expect(cells).toEqual([table.backupOf(key, table.route(key).oldCell)]);
      expect(cells[0]).not.toBe(table.route(key).oldCell);
    }
  });

  it('for a key of a Down cell, the cell that took it over first, then its backup cell', () => {
    const healthy = RoutingTable.fromCellSet(spec({ a: 'Normal', b: 'Normal', c: 'Normal' }));
    const failed = spec({ a: 'Normal', b: 'Normal', c: 'Down' });
    const table = RoutingTable.fromCellSet(failed);
    const name = Array.from({ length: 100 }, (_, i) => `web-${i}`).find(
      (candidate) => healthy.route(healthy.keyOf({ namespace: 'shop', name: candidate })).oldCell === 'c',
    )!;
    const key = table.keyOf({ namespace: 'shop', name });
    const takenOverBy = table.route(key).oldCell;
    // Backed up in the next cell clockwise from c: the one that takes c's key over.
    expect(takenOverBy).toBe(healthy.backupOf(healthy.keyOf({ namespace: 'shop', name }), 'c'));
    expect(backupCellsOf(failed, { namespace: 'shop', name })).toEqual([
      takenOverBy,
      ['a', 'b'].find((cell) => cell !== takenOverBy),
    ]);
  });

  it('is nothing when the federation has one cell', () => {
    expect(backupCellsOf(spec({ a: 'Normal' }), { namespace: 'shop', name: 'web' })).toEqual([]);
  });
});

describe('otherCellOf', () => {
  it('names the cell a backup is labelled with when it is not the one it was read from', () => {
    const backup = (cell?: string) => ({
      metadata: { labels: cell ? ({ 'cellfed.io/backup-cell-id': cell } as Record<string, string>) : {} },
    });
    expect(otherCellOf(backup('cell-2'), 'cell-1')).toBe('cell-2');
    expect(otherCellOf(backup('cell-1'), 'cell-1')).toBeUndefined();
    // Unlabelled (written by hand): nothing to tell by.
    expect(otherCellOf(backup(), 'cell-1')).toBeUndefined();
  });
});
