import { parseCellSetSpec } from '@cellfed/api';
import { RoutingTable } from '@cellfed/hashing';

import { whereIs } from './where.ts';

const spec = (states: Record<string, string>) =>
  parseCellSetSpec({
    cells: Object.entries(states).map(([id, state]) => ({ id, state, kubeconfigSecretRef: { name: id } })),
  });

describe('whereIs', () => {
  it('names the cell the ring gives the object and the next cell clockwise as its backup', () => {
    const settled = spec({ a: 'Normal', b: 'Normal', c: 'Normal' });
    const table = RoutingTable.fromCellSet(settled);
    const where = whereIs(settled, { namespace: 'shop', name: 'web' });
    expect(where).toEqual({
      key: 'shop/web',
      cell: table.locateCurrent('shop/web').primary,
      backup: table.locateCurrent('shop/web').backup,
      state: 'settled',
    });
  });

  it('hashes the namespace alone when the namespace says shard-by=namespace', () => {
    const settled = spec({ a: 'Normal', b: 'Normal' });
    expect(
      whereIs(settled, { namespace: 'shop', name: 'web' }, { 'cellfed.io/shard-by': 'namespace' }).key,
    ).toBe('shop');
  });

  it('says an object is moving to a joining cell, and one of a Down cell is failed over', () => {
    const joining = spec({ a: 'Normal', b: 'Normal', c: 'Joining' });
    const table = RoutingTable.fromCellSet(joining);
    const moving = Array.from({ length: 200 }, (_, i) => `web-${i}`).find(
      (name) => table.route(`shop/${name}`).case !== 4,
    )!;
    expect(whereIs(joining, { namespace: 'shop', name: moving }).state).toBe('moving to c (c is joining)');

    const healthy = RoutingTable.fromCellSet(spec({ a: 'Normal', b: 'Normal', c: 'Normal' }));
    const onC = Array.from({ length: 200 }, (_, i) => `web-${i}`).find(
      (name) => healthy.route(`shop/${name}`).oldCell === 'c',
    )!;
    const failed = whereIs(spec({ a: 'Normal', b: 'Normal', c: 'Down' }), { namespace: 'shop', name: onC });
    expect(failed.cell).toBe(healthy.locateCurrent(`shop/${onC}`).backup);
    expect(failed.state).toBe('failed over from c (Down): served from its backup until promoted');
  });
});
