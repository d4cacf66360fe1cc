import { COPIED_FROM_ANNOTATION } from '@cellfed/api';
import { FakeCell, fakeCopies } from '@cellfed/controller-kit/testing';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL, RoutingTable } from '@cellfed/hashing';

import { MoveRate, countProgress } from './progress.ts';
import { PlanHolder } from '../rebalance-plan.ts';
import { configMapCellSet, CONFIGMAPS } from '../testing/configmap-cells.ts';

const spec = configMapCellSet({ a: 'Normal', b: 'Joining' });

const put = (cell: FakeCell, name: string, labels = {}, annotations = {}) =>
  cell.put(`/api/v1/namespaces/ns/configmaps/${name}`, {
    metadata: { name, namespace: 'ns', labels, annotations },
  });

/** The progress of the plan of `cellSet` at `generation`, counted over `cells`. */
function progressOf(cellSet: typeof spec, generation: number, cells: FakeCell[]) {
  const plans = new PlanHolder();
  plans.load(cellSet, generation);
  return countProgress(fakeCopies(cells, CONFIGMAPS), plans.current()!, () => undefined);
}

describe('countProgress', () => {
  it('counts each object once, where the router serves it; leftovers and uncommitted copies are not objects', () => {
    const table = RoutingTable.fromCellSet(spec);
    const names = Array.from({ length: 60 }, (_, i) => `cm-${i}`);
    const moving = names.filter(
      (name) => table.route(table.keyOf({ namespace: 'ns', name })).newCell === 'b',
    );
    const staying = names.filter((name) => !moving.includes(name));
    expect(moving.length).toBeGreaterThanOrEqual(4);
    const a = new FakeCell('a');
    const b = new FakeCell('b');
    for (const name of staying) put(a, name);
    const [done, copying, fenced, waiting, ...rest] = moving;
    put(a, done!, { [REBALANCE_STATUS_LABEL]: MIGRATED }); // leftover
    put(b, done!);
    put(a, copying!, { [REBALANCE_STATUS_LABEL]: MIGRATING });
    put(b, copying!, {}, { [COPIED_FROM_ANNOTATION]: 'a/uid' });
    put(a, fenced!, { [REBALANCE_STATUS_LABEL]: MIGRATING });
    put(a, waiting!);
    for (const name of rest) put(a, name);

    const progress = progressOf(spec, 1, [a, b]);
    expect(progress).toMatchObject({
      total: names.length,
      toMove: moving.length,
      moved: 1,
      pending: moving.length - 1,
      inFlight: 2,
      uncommitted: 1,
    });
    expect(progress.cells).toEqual([
      { id: 'a', state: 'Normal', objects: names.length - 1, movingIn: 0, movingOut: moving.length - 1 },
      { id: 'b', state: 'Joining', objects: 1, movingIn: moving.length - 1, movingOut: 0 },
    ]);
  });

  it('does not count a leftover in the new cell as moved: a drain soon after a join starts at 0 moved', () => {
    const draining = configMapCellSet({ a: 'Normal', b: 'Draining' });
    const table = RoutingTable.fromCellSet(draining);
    const names = Array.from({ length: 40 }, (_, i) => `cm-${i}`);
    const movingBack = names.filter(
      (name) => table.route(table.keyOf({ namespace: 'ns', name })).oldCell === 'b',
    );
    expect(movingBack.length).toBeGreaterThanOrEqual(4);
    const a = new FakeCell('a');
    const b = new FakeCell('b');
    for (const name of names) {
      if (!movingBack.includes(name)) {
        put(a, name);
        continue;
      }
      // Moved a → b by the join; a still holds its old copy, kept until --delete-after.
      put(a, name, { [REBALANCE_STATUS_LABEL]: MIGRATED });
      put(b, name);
    }

    const progress = progressOf(draining, 2, [a, b]);
    expect(progress).toMatchObject({
      total: names.length,
      toMove: movingBack.length,
      moved: 0,
      pending: movingBack.length,
    });
  });
});

describe('MoveRate', () => {
  it('is objects per second over the window, unknown under a second, reset by a new plan', () => {
    const rate = new MoveRate(10_000);
    rate.add(0, 0);
    rate.add(500, 10);
    expect(rate.perSecond()).toBeUndefined();
    rate.add(2000, 40);
    expect(rate.perSecond()).toBe(20);
    rate.add(30_000, 600);
    rate.add(32_000, 640);
    expect(rate.perSecond()).toBe(20);
    rate.add(33_000, 0);
    expect(rate.perSecond()).toBeUndefined();
  });
});
