import { COPIED_FROM_ANNOTATION } from '@cellfed/api';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import { type CellularObjectRef, routeOf } from '@cellfed/federation';

import { needsWork } from './needs-work.ts';
import { configMapCellSet, CONFIGMAPS } from '../testing/configmap-cells.ts';
import { PlanHolder } from '../rebalance-plan.ts';

const spec = configMapCellSet({ a: 'Normal', b: 'Joining', c: 'Normal' });
const plans = new PlanHolder();
plans.load(spec, 1);
const plan = plans.current()!;
const noLabels = () => undefined;
const refs: CellularObjectRef[] = Array.from({ length: 200 }, (_, i) => ({
  resource: CONFIGMAPS,
  namespace: 'shop',
  name: `cm-${i}`,
}));
const routed = refs.map((ref) => ({ ref, ...routeOf(plan.table, ref, noLabels) }));
const moving = routed.find((one) => one.oldCell !== one.newCell)!;
const staying = routed.find((one) => one.oldCell === one.newCell)!;
const elsewhere = (one: { oldCell: string; newCell: string }) =>
  ['a', 'b', 'c'].find((id) => id !== one.oldCell && id !== one.newCell)!;

describe('needsWork', () => {
  it('queues a copy in its old cell that the plan sends to another', () => {
    expect(needsWork(plan, moving.oldCell, moving.ref, {}, noLabels)).toBe(true);
  });

  it('leaves unmarked copies alone: an object that stays, one made in its new cell, a stray elsewhere', () => {
    expect(needsWork(plan, staying.oldCell, staying.ref, {}, noLabels)).toBe(false);
    expect(needsWork(plan, moving.newCell, moving.ref, {}, noLabels)).toBe(false);
    expect(needsWork(plan, elsewhere(moving), moving.ref, {}, noLabels)).toBe(false);
  });

  it('queues any copy carrying migration marks, wherever it is', () => {
    for (const status of [MIGRATING, MIGRATED])
      expect(
        needsWork(
          plan,
          staying.oldCell,
          staying.ref,
          { labels: { [REBALANCE_STATUS_LABEL]: status } },
          noLabels,
        ),
      ).toBe(true);
    const copy = { annotations: { [COPIED_FROM_ANNOTATION]: `${moving.oldCell}/uid-1` } };
    expect(needsWork(plan, moving.newCell, moving.ref, copy, noLabels)).toBe(true);
  });

  it('never queues what a cell’s own controllers made (a native controller reference): it runs where it is', () => {
    const made = {
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'x', uid: 'u', controller: true }],
    };
    expect(needsWork(plan, moving.oldCell, moving.ref, made, noLabels)).toBe(false);
    const merelyOwned = { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'u' }] };
    expect(needsWork(plan, moving.oldCell, moving.ref, merelyOwned, noLabels)).toBe(true);
  });

  it('never queues a cell’s own objects', () => {
    const own: CellularObjectRef = { resource: CONFIGMAPS, namespace: 'kube-system', name: moving.ref.name };
    expect(needsWork(plan, 'a', own, { labels: { [REBALANCE_STATUS_LABEL]: MIGRATING } }, noLabels)).toBe(
      false,
    );
  });
});
