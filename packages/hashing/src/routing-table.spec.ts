import fc from 'fast-check';

import { FAST, cellId, keys } from '../test/arbitraries';
import { specOf } from '../test/cell-sets';
import { CELL_STATES, type CellState } from './cell-states';
import { HashRing } from './ring';
import { RoutingTable } from './routing-table';

const spec = specOf;

/** CellSets with at least one Normal cell and any mix of the other states. */
const cellSets = fc
  .tuple(
    cellId,
    fc.uniqueArray(fc.tuple(cellId, fc.constantFrom<CellState>(...CELL_STATES)), {
      maxLength: 7,
      selector: ([id]) => id,
    }),
  )
  .filter(([normal, others]) => others.every(([id]) => id !== normal))
  .map(([normal, others]) => spec([[normal, 'Normal'], ...others]));

describe('RoutingTable', () => {
  it('computes old on Normal ∪ Draining, new on Normal ∪ Joining, and the case from their states', () => {
    fc.assert(
      fc.property(cellSets, keys, (cellSet, keyList) => {
        const table = RoutingTable.fromCellSet(cellSet, FAST);
        const ids = (...states: CellState[]) => cellSet.cells.filter((c) => states.includes(c.state));
        const current = HashRing.build(ids('Normal', 'Draining'), FAST);
        const desired = HashRing.build(ids('Normal', 'Joining'), FAST);
        for (const key of keyList) {
          const decision = table.route(key);
          expect(decision.oldCell).toBe(current.lookup(key));
          expect(decision.newCell).toBe(desired.lookup(key));
          const oldState = table.stateOf(decision.oldCell);
          const newState = table.stateOf(decision.newCell);
          const expected =
            decision.oldCell === decision.newCell
              ? 4
              : oldState === 'Draining' && newState === 'Joining'
                ? 1
                : oldState === 'Normal' && newState === 'Joining'
                  ? 2
                  : 3;
          expect(decision.case).toBe(expected);
          if (decision.case === 4) expect(oldState).toBe('Normal');
          if (decision.case === 3) expect(newState).toBe('Normal');
          expect(oldState).not.toBe('Down');
          expect(newState).not.toBe('Down');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('routes the keys of a cell marked Down to their backup cell (failover is a configuration change), and names the cell they failed over from', () => {
    fc.assert(
      fc.property(fc.uniqueArray(cellId, { minLength: 3, maxLength: 8 }), keys, (ids, keyList) => {
        const healthy = RoutingTable.fromCellSet(spec(ids.map((id) => [id, 'Normal'] as const)), FAST);
        const [down, ...rest] = ids;
        const failed = RoutingTable.fromCellSet(
          spec([[down!, 'Down'], ...rest.map((id) => [id, 'Normal'] as const)]),
          FAST,
        );
        for (const key of keyList) {
          const { primary, backup } = healthy.locateCurrent(key);
          const decision = failed.route(key);
          expect(decision.case).toBe(4);
          expect(decision.oldCell).toBe(primary === down ? backup : primary);
          expect(failed.failedOverFrom(key)).toBe(primary === down ? down : undefined);
          expect(healthy.failedOverFrom(key)).toBeUndefined();
          // The backup the healthy federation kept is in the cell that serves the key after the failure.
          expect(healthy.backupOf(key, primary)).toBe(backup);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('puts the backup of an object beside the ring it lives on, and none beside a copy that is leaving', () => {
    const table = RoutingTable.fromCellSet(
      spec([
        ['a', 'Normal'],
        ['b', 'Normal'],
        ['c', 'Joining'],
      ]),
      FAST,
    );
    let moving = 0;
    for (let i = 0; i < 2000; i++) {
      const key = `ns/obj-${i}`;
      const decision = table.route(key);
      expect(table.backupOf(key, decision.oldCell)).toBe(table.locateCurrent(key).backup);
      if (decision.case === 4) continue;
      moving++;
      // Once moved into the joining cell, its backup is the next cell on the desired ring.
      expect(table.backupOf(key, decision.newCell)).toBe(table.locateDesired(key).backup);
      expect(table.backupOf(key, decision.newCell)).not.toBe('c');
    }
    expect(moving).toBeGreaterThan(400);
    expect(table.backupOf('ns/obj-0', 'nowhere')).toBeUndefined();
    expect(RoutingTable.fromCellSet(spec([['a', 'Normal']])).backupOf('ns/x', 'a')).toBeUndefined();
  });

  it('is not rebalancing when every live cell is Normal, and shares one ring', () => {
    const table = RoutingTable.fromCellSet(
      spec([
        ['a', 'Normal'],
        ['b', 'Normal'],
        ['c', 'Down'],
      ]),
      FAST,
    );
    expect(table.rebalancing).toBe(false);
    expect(table.desiredRing).toBe(table.currentRing);
    expect(
      RoutingTable.fromCellSet(
        spec([
          ['a', 'Normal'],
          ['b', 'Joining'],
        ]),
        FAST,
      ).rebalancing,
    ).toBe(true);
  });

  it('sends to the joining cell exactly the keys it takes over, and nothing else moves', () => {
    const table = RoutingTable.fromCellSet(
      spec([
        ['a', 'Normal'],
        ['b', 'Normal'],
        ['c', 'Joining'],
      ]),
      FAST,
    );
    const cases = new Map<number, number>();
    for (let i = 0; i < 3000; i++) {
      const decision = table.route(`ns/obj-${i}`);
      cases.set(decision.case, (cases.get(decision.case) ?? 0) + 1);
      if (decision.case === 2) expect(decision.newCell).toBe('c');
    }
    expect([...cases.keys()].sort()).toEqual([2, 4]);
    // c takes about a third.
    expect(cases.get(2)! / 3000).toBeGreaterThan(0.25);
    expect(cases.get(2)! / 3000).toBeLessThan(0.42);
  });

  it('changes a weight as a rebalance: old cells by previousWeight, new by weight, only that cell gains keys (case 5)', () => {
    const before = RoutingTable.fromCellSet(
      spec([
        ['a', 'Normal'],
        ['b', 'Normal'],
        ['c', 'Normal'],
      ]),
      FAST,
    );
    const cells = specOf([
      ['a', 'Normal'],
      ['b', 'Normal'],
      ['c', 'Normal'],
    ]).cells.map((cell) => (cell.id === 'a' ? { ...cell, weight: 3, previousWeight: 1 } : cell));
    const changing = RoutingTable.fromCellSet({ cells, shardBy: 'name' }, FAST);
    const after = RoutingTable.fromCellSet(
      { cells: cells.map(({ previousWeight: _previous, ...cell }) => cell), shardBy: 'name' },
      FAST,
    );
    expect(changing.rebalancing).toBe(true);
    expect(after.rebalancing).toBe(false);
    let moving = 0;
    for (let i = 0; i < 3000; i++) {
      const key = `ns/obj-${i}`;
      const decision = changing.route(key);
      // Old is where the object is under the previous weights, new where it goes under the new ones.
      expect(decision.oldCell).toBe(before.route(key).oldCell);
      expect(decision.newCell).toBe(after.route(key).oldCell);
      if (decision.oldCell === decision.newCell) {
        expect(decision.case).toBe(4);
      } else {
        moving++;
        expect(decision).toMatchObject({ case: 5, newCell: 'a' });
      }
    }
    // a goes from a third of the keys to three fifths.
    expect(moving / 3000).toBeGreaterThan(0.2);
    expect(moving / 3000).toBeLessThan(0.34);
    // Lowering a weight moves keys out of that cell only.
    const lowering = RoutingTable.fromCellSet(
      {
        cells: cells.map((cell) => (cell.id === 'a' ? { ...cell, weight: 1, previousWeight: 3 } : cell)),
        shardBy: 'name',
      },
      FAST,
    );
    for (let i = 0; i < 3000; i++) {
      const decision = lowering.route(`ns/obj-${i}`);
      if (decision.case === 5) expect(decision.oldCell).toBe('a');
    }
  });

  it('derives keys with the CellSet shardBy, overridden by the namespace label', () => {
    const byName = RoutingTable.fromCellSet(spec([['a', 'Normal']]));
    expect(byName.keyOf({ namespace: 'shop', name: 'web' })).toBe('shop/web');
    expect(byName.keyOf({ namespace: 'shop', name: 'web' }, { 'cellfed.io/shard-by': 'namespace' })).toBe(
      'shop',
    );
    const byNamespace = RoutingTable.fromCellSet({ ...spec([['a', 'Normal']]), shardBy: 'namespace' });
    expect(byNamespace.keyOf({ namespace: 'shop', name: 'web' })).toBe('shop');
    expect(byNamespace.keyOf({ namespace: 'shop', name: 'web' }, { 'cellfed.io/shard-by': 'name' })).toBe(
      'shop/web',
    );
  });
});
