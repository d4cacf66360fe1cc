import {
  FOLLOWER_LABEL,
  QUOTA_DIVIDED_ANNOTATION,
  QUOTA_DRAWN_AT_ANNOTATION,
  QUOTA_SHARE_ANNOTATION,
  parseCellSetSpec,
} from '@cellfed/api';
import { FakeCell, FakeClock, memoryLogger } from '@cellfed/controller-kit/testing';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import { type KubeObject, type ResourceQuota } from '@cellfed/federation';

import { QuotaReconciler, countedInCells } from './quota-reconciler.ts';
import { PlanHolder } from '../rebalance-plan.ts';

const NS = '/api/v1/namespaces/shop';
const QUOTA = `${NS}/resourcequotas/team`;
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

function setup(options: { down?: string; unengaged?: string } = {}) {
  const plans = new PlanHolder();
  plans.load(
    parseCellSetSpec({
      cellularResources: [DEPLOYMENTS, CONFIGMAPS],
      cells: ['a', 'b', 'c'].map((id) => ({
        id,
        state: id === options.down ? ('Down' as const) : ('Normal' as const),
        kubeconfigSecretRef: { name: id },
      })),
    }),
    1,
  );
  const cells = new Map(['a', 'b', 'c'].map((id) => [id, new FakeCell(id)]));
  const controlPlane = new FakeCell('control-plane');
  const clock = new FakeClock(Date.parse('2026-11-27T12:00:00Z'));
  const reconciler = new QuotaReconciler({
    plans,
    controlPlane,
    quota: () => controlPlane.get(QUOTA) as ResourceQuota | undefined,
    cell: (id) => {
      const client = cells.get(id);
      return client && id !== options.unengaged ? { id, client } : undefined;
    },
    followers: true,
    clock,
  });
  const { logger } = memoryLogger();
  const reconcile = () =>
    reconciler.reconcile({
      key: { namespace: 'shop', name: 'team' },
      lane: 'high',
      signal: new AbortController().signal,
      log: logger,
    });
  const makeQuota = (hard: Record<string, string>) =>
    controlPlane.put(QUOTA, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'team', namespace: 'shop' },
      spec: { hard },
    } as KubeObject);
  /** What a cell's own quota controller does: status.hard from spec.hard, and the use it counts. */
  const count = (cell: string, used: Record<string, string>) => {
    const copy = cells.get(cell)!.get(QUOTA) as ResourceQuota;
    cells.get(cell)!.put(QUOTA, { ...copy, status: { hard: copy.spec?.hard, used } } as KubeObject);
  };
  const copy = (cell: string) => cells.get(cell)!.get(QUOTA) as ResourceQuota | undefined;
  const share = (cell: string) =>
    JSON.parse(copy(cell)?.metadata.annotations?.[QUOTA_SHARE_ANNOTATION] ?? '{}') as Record<string, string>;
  /** Six pods divided 2/2/2, then a ReplicaSet in c made its two pods and a and b use nothing. */
  const cRanLow = async () => {
    makeQuota({ pods: '6' });
    await reconcile();
    count('a', { pods: '0' });
    count('b', { pods: '0' });
    count('c', { pods: '2' });
  };
  return { cells, controlPlane, clock, reconcile, makeQuota, count, copy, share, cRanLow };
}

describe('QuotaReconciler', () => {
  it('divides a new quota among the live cells in whole pods and milli-CPUs, and waits for them to count', async () => {
    const { controlPlane, reconcile, makeQuota, copy, share } = setup();
    makeQuota({ pods: '5', 'requests.cpu': '1', 'count/deployments.apps': '2' });
    expect(await reconcile()).toEqual({ requeueAfterMs: 1000 });
    expect(['a', 'b', 'c'].map(share)).toEqual([
      { 'count/deployments.apps': '1', pods: '2', 'requests.cpu': '334m' },
      { 'count/deployments.apps': '1', pods: '2', 'requests.cpu': '333m' },
      { 'count/deployments.apps': '0', pods: '1', 'requests.cpu': '333m' },
    ]);
    // No overhead of these names: each copy's limits are its share, in force before the cell counted it.
    expect(copy('a')?.spec?.hard).toEqual(share('a'));
    expect(copy('a')?.status?.hard).toEqual(share('a'));
    // Every cell holds its share in force: the quota is marked divided, so the quota controller (kube's,
    // through the router) may count it now. Its status is never written here.
    const quota = controlPlane.get(QUOTA)!;
    expect(quota.metadata.annotations?.[QUOTA_DIVIDED_ANNOTATION]).toBe(quota.metadata.uid);
    expect(quota).not.toHaveProperty('status');
  });

  it('leaves the names that live in the control plane to it, and writes nothing more once the cells have counted', async () => {
    const { cells, controlPlane, reconcile, makeQuota, count } = setup();
    makeQuota({ pods: '5', 'requests.cpu': '1', resourcequotas: '2' });
    await reconcile();
    count('a', { pods: '1', 'requests.cpu': '250m' });
    count('b', { pods: '2', 'requests.cpu': '300m' });
    count('c', { pods: '0', 'requests.cpu': '0' });
    expect(await reconcile()).toEqual({ requeueAfterMs: 10_000 });
    // Quotas live in the control plane: no cell limits them.
    expect(cells.get('a')!.get(QUOTA)).not.toHaveProperty(['spec', 'hard', 'resourcequotas']);
    const writes = [...cells.values(), controlPlane].map((cell) => cell.writes.length);
    await reconcile();
    expect([...cells.values(), controlPlane].map((cell) => cell.writes.length)).toEqual(writes);
  });

  it('keeps no copy of a quota that limits only what lives in the control plane', async () => {
    const { cells, controlPlane, reconcile, makeQuota, copy } = setup();
    makeQuota({ pods: '4' });
    await reconcile();
    expect(copy('a')?.spec?.hard).toEqual({ pods: '2' });
    makeQuota({ secrets: '3', resourcequotas: '1' });
    expect(await reconcile()).toEqual({});
    expect([...cells.keys()].map(copy)).toEqual([undefined, undefined, undefined]);
    // Nothing for the cells to hold: divided as it is.
    expect(controlPlane.get(QUOTA)?.metadata.annotations?.[QUOTA_DIVIDED_ANNOTATION]).toBe(
      controlPlane.get(QUOTA)?.metadata.uid,
    );
  });

  it('leaves what a cell holds that is not the federation’s (its kube-root-ca.crt, follower copies) out of its share and of the use shown', async () => {
    const { cells, controlPlane, reconcile, makeQuota, count, copy } = setup();
    const configMap = (cell: FakeCell, name: string, labels: Record<string, string> = {}) =>
      cell.put(`${NS}/configmaps/${name}`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'shop', labels },
      });
    for (const cell of [...cells.values(), controlPlane]) configMap(cell, 'kube-root-ca.crt');
    configMap(cells.get('b')!, 'settings', { [FOLLOWER_LABEL]: 'a' });
    makeQuota({ configmaps: '7' });
    await reconcile();
    // Six for the federation's own (seven less the control plane's kube-root-ca.crt), two each.
    expect(['a', 'b', 'c'].map((cell) => copy(cell)?.spec?.hard?.configmaps)).toEqual(['3', '4', '3']);
    count('a', { configmaps: '2' }); // kube-root-ca.crt and one of the federation's
    count('b', { configmaps: '2' }); // kube-root-ca.crt and a follower
    count('c', { configmaps: '1' });
    // Counted against the limits in force: nothing pending, no cell short (b's two are not the federation's).
    expect(await reconcile()).toEqual({ requeueAfterMs: 10_000 });
    expect(['a', 'b', 'c'].map((cell) => copy(cell)?.spec?.hard?.configmaps)).toEqual(['3', '4', '3']);
  });

  it('leaves a moved object’s old copy out while it waits to be deleted', async () => {
    const { cells, reconcile, makeQuota, count, copy } = setup();
    const deployment = (cell: string, name: string, labels: Record<string, string> = {}) =>
      cells.get(cell)!.put(`/apis/apps/v1/namespaces/shop/deployments/${name}`, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace: 'shop', labels },
      });
    deployment('a', 'web', { [REBALANCE_STATUS_LABEL]: MIGRATED });
    deployment('b', 'web');
    // One being moved out of c right now: fenced, its new copy not made yet.
    deployment('c', 'api', { [REBALANCE_STATUS_LABEL]: MIGRATING });
    makeQuota({ 'count/deployments.apps': '3' });
    await reconcile();
    expect(['a', 'b', 'c'].map((cell) => copy(cell)?.spec?.hard?.['count/deployments.apps'])).toEqual([
      '2',
      '1',
      '2',
    ]);
    count('a', { 'count/deployments.apps': '1' });
    count('b', { 'count/deployments.apps': '1' });
    count('c', { 'count/deployments.apps': '1' });
    expect(await reconcile()).toEqual({ requeueAfterMs: 10_000 });
  });

  it('marks a quota divided under the version it divided, and marks again one whose mark is another quota’s', async () => {
    const { controlPlane, reconcile, makeQuota } = setup();
    const stored = makeQuota({ pods: '4' });
    // A manifest copied from another quota (a restore, say) carries that quota's mark.
    controlPlane.put(QUOTA, {
      ...stored,
      metadata: { ...stored.metadata, annotations: { [QUOTA_DIVIDED_ANNOTATION]: 'another-uid' } },
    });
    const read = controlPlane.get(QUOTA)!;
    // The spec changes after the controller read it: the mark would be for limits it never divided.
    controlPlane.before = (method) => {
      if (method !== 'PATCH') return;
      controlPlane.before = undefined;
      controlPlane.put(QUOTA, { ...controlPlane.get(QUOTA)!, spec: { hard: { pods: '6' } } });
    };
    expect(await reconcile()).toEqual({ requeueAfterMs: 100 });
    expect(controlPlane.get(QUOTA)?.metadata.annotations?.[QUOTA_DIVIDED_ANNOTATION]).toBe('another-uid');
    await reconcile();
    expect(controlPlane.get(QUOTA)?.metadata.annotations?.[QUOTA_DIVIDED_ANNOTATION]).toBe(read.metadata.uid);
  });

  it('does not mark a quota divided while a cell admitted against its old share as it was lowered', async () => {
    const { cells, controlPlane, reconcile, makeQuota, cRanLow } = setup();
    await cRanLow();
    // Unmarked again (a client replaced the quota from a file without it).
    makeQuota({ pods: '6' });
    const b = cells.get('b')!;
    b.before = (method, path) => {
      if (!path.endsWith('/status')) return;
      b.before = undefined;
      // b's admission charges a pod as its share is lowered: what the division read is no longer true.
      const copy = b.get(QUOTA)!;
      b.put(QUOTA, {
        ...copy,
        status: { ...(copy as ResourceQuota).status, used: { pods: '1' } },
      } as KubeObject);
    };
    expect(await reconcile()).toEqual({ requeueAfterMs: 1000 });
    expect(controlPlane.get(QUOTA)?.metadata.annotations).toBeUndefined();
  });

  it('cuts a lowered limit from the unused shares first, and holds back a raised one while a draw may still be giving it', async () => {
    const { cells, clock, reconcile, makeQuota, count, share } = setup();
    makeQuota({ pods: '6' });
    await reconcile();
    count('a', { pods: '2' });
    count('b', { pods: '0' });
    count('c', { pods: '1' });
    makeQuota({ pods: '4' });
    await reconcile();
    expect(['a', 'b', 'c'].map((cell) => share(cell).pods)).toEqual(['2', '0', '2']);

    // A draw just took b's share for another cell and has not given it yet: the shortfall waits.
    const b = cells.get('b')!;
    const drawn = b.get(QUOTA)!;
    b.put(QUOTA, {
      ...drawn,
      metadata: {
        ...drawn.metadata,
        annotations: {
          ...drawn.metadata.annotations,
          [QUOTA_DRAWN_AT_ANNOTATION]: new Date(clock.now()).toISOString(),
        },
      },
    });
    makeQuota({ pods: '7' });
    expect(await reconcile()).toEqual({ requeueAfterMs: 10_000 });
    expect(['a', 'b', 'c'].map((cell) => share(cell).pods)).toEqual(['2', '0', '2']);
    await clock.advance(4000);
    expect(await reconcile()).toEqual({ requeueAfterMs: 6000 });
    await clock.advance(6000);
    await reconcile();
    expect(['a', 'b', 'c'].map((cell) => share(cell).pods)).toEqual(['3', '1', '3']);
  });

  it('divides the unused part again when a cell runs low, lowering shares before it raises any', async () => {
    const { cells, reconcile, share, cRanLow } = setup();
    await cRanLow();
    const order: string[] = [];
    for (const [id, cell] of cells)
      cell.before = (method, path) => order.push(`${id} ${path.endsWith('/status') ? 'status' : 'spec'}`);
    await reconcile();
    expect(['a', 'b', 'c'].map((cell) => share(cell).pods)).toEqual(['2', '1', '3']);
    expect(order).toEqual(['b spec', 'b status', 'c spec', 'c status']);
  });

  it('reads again soon, with no error, when a copy changed between its read and its write', async () => {
    const { cells, reconcile, count, cRanLow } = setup();
    await cRanLow();
    // b's own quota admission charges a pod just before the controller lowers b's share.
    const b = cells.get('b')!;
    b.before = () => {
      b.before = undefined;
      count('b', { pods: '1' });
    };
    expect(await reconcile()).toEqual({ requeueAfterMs: 100 });
  });

  it('never takes over a quota of that name a cell has of its own, and holds no share there', async () => {
    const { cells, controlPlane, reconcile, makeQuota, copy } = setup();
    cells.get('b')!.put(QUOTA, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'team', namespace: 'shop' },
      spec: { hard: { pods: '100' } },
    } as KubeObject);
    makeQuota({ pods: '4' });
    await reconcile();
    expect(['a', 'b', 'c'].map((cell) => copy(cell)?.spec?.hard?.pods)).toEqual(['2', '100', '2']);
    // Taken away with the control plane's quota: cellfed's copies only.
    controlPlane.objects.delete(QUOTA);
    await reconcile();
    expect(['a', 'b', 'c'].map((cell) => copy(cell)?.spec?.hard?.pods)).toEqual([
      undefined,
      '100',
      undefined,
    ]);
  });

  it('divides nothing while a live cell is not engaged: it may still admit against its copy', async () => {
    const { controlPlane, reconcile, makeQuota, copy } = setup({ unengaged: 'c' });
    makeQuota({ pods: '4' });
    expect(await reconcile()).toEqual({ requeueAfterMs: 5000 });
    expect(['a', 'b'].map((cell) => copy(cell))).toEqual([undefined, undefined]);
    // Not divided: the quota controller may not count it yet.
    expect(controlPlane.get(QUOTA)?.metadata.annotations).toBeUndefined();
  });

  it('keeps no share in a Down cell, and takes the copies away with the quota', async () => {
    const { cells, controlPlane, reconcile, makeQuota, copy } = setup({ down: 'c' });
    makeQuota({ pods: '4' });
    await reconcile();
    expect(['a', 'b', 'c'].map((cell) => copy(cell)?.spec?.hard?.pods)).toEqual(['2', '2', undefined]);
    controlPlane.objects.delete(QUOTA);
    await reconcile();
    expect([...cells.values()].map((cell) => cell.get(QUOTA))).toEqual([undefined, undefined, undefined]);
  });
});

describe('countedInCells', () => {
  const plan = {
    spec: parseCellSetSpec({
      cellularResources: [DEPLOYMENTS, CONFIGMAPS],
      cells: [{ id: 'a', state: 'Normal', kubeconfigSecretRef: { name: 'a' } }],
    }),
  };
  it.each([
    ['pods', 'shop', true],
    ['requests.cpu', 'shop', true],
    ['count/replicasets.apps', 'shop', true],
    ['count/deployments.apps', 'shop', true],
    ['configmaps', 'shop', true],
    ['secrets', 'shop', false],
    ['resourcequotas', 'shop', false],
    ['count/roles.rbac.authorization.k8s.io', 'shop', false],
    ['pods', 'kube-system', false],
    ['no-such-name', 'shop', false],
  ])('%s in %s: %s', (name, namespace, expected) => {
    expect(countedInCells(plan, namespace, name)).toBe(expected);
  });
});
