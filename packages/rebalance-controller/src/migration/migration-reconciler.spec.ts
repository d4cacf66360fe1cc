import { PROMOTED_FROM_ANNOTATION, parseCellSetSpec, type CellSetSpecInput } from '@cellfed/api';
import { ApiError, TokenBucket, type CopiesView } from '@cellfed/controller-kit';
import { FakeCell, FakeClock, fakeCopies, memoryLogger } from '@cellfed/controller-kit/testing';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL, RoutingTable } from '@cellfed/hashing';
import { Registry } from 'prom-client';
import { type KubeObject, formatObjectKey, objectKeyOf, type CellularObjectRef } from '@cellfed/federation';

import { PlannedObjects } from '../planned-objects.ts';
import { FenceWindow } from './fence-window.ts';
import { MigrationReconciler } from './migration-reconciler.ts';
import { ObjectMover } from './object-mover.ts';
import { PlanHolder } from '../rebalance-plan.ts';
import { RebalanceMetrics } from '../rebalance-metrics.ts';
import { StatusSubresources } from './status-subresources.ts';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const DELETE_AFTER = 60_000;
const spec = (states: Record<string, string>): CellSetSpecInput => ({
  cellularResources: [CONFIGMAPS],
  cells: Object.entries(states).map(([id, state]) => ({
    id,
    state: state as 'Normal',
    kubeconfigSecretRef: { name: id },
  })),
});
const JOINING = spec({ a: 'Normal', b: 'Joining' });
const path = (name: string) => `/api/v1/namespaces/shop/configmaps/${name}`;
const ref = (name: string): CellularObjectRef => ({ resource: CONFIGMAPS, namespace: 'shop', name });

/** A name the joining spec moves from a to b. */
function movingName(): string {
  const table = RoutingTable.fromCellSet(parseCellSetSpec(JOINING));
  return Array.from({ length: 100 }, (_, i) => `cm-${i}`).find(
    (name) => table.route(table.keyOf({ namespace: 'shop', name })).newCell === 'b',
  )!;
}

function setup(options: { rate?: TokenBucket; fences?: FenceWindow } = {}) {
  const clock = new FakeClock();
  const cells = { a: new FakeCell('a'), b: new FakeCell('b') };
  const plans = new PlanHolder();
  plans.load(parseCellSetSpec(JOINING), 2);
  const registry = new Registry();
  const metrics = new RebalanceMetrics(registry);
  const live = fakeCopies(Object.values(cells), CONFIGMAPS);
  // A cache that stops following the cells while frozen and shows what it held when first frozen (a watch
  // that lags); following again shows the cells as they are.
  const held = new Map<string, ReturnType<CopiesView['copiesOf']>>();
  let frozen = false;
  const cache = {
    freeze: () => (frozen = true),
    follow: () => (frozen = false),
  };
  const copies: CopiesView = {
    ...live,
    copiesOf(ref) {
      const key = formatObjectKey(ref);
      if (!frozen) return live.copiesOf(ref);
      if (!held.has(key)) held.set(key, live.copiesOf(ref));
      return held.get(key)!;
    },
  };
  const reconciler = new MigrationReconciler({
    plans,
    copies,
    cell: (id) => {
      const cell = cells[id as 'a' | 'b'];
      return cell && { id, client: cell };
    },
    namespaceLabels: () => undefined,
    mover: new ObjectMover({ clock, statusSubresources: new StatusSubresources() }),
    metrics,
    clock,
    deleteAfterMs: DELETE_AFTER,
    ...options,
  });
  const reconcile = (name: string) =>
    new PlannedObjects(plans, reconciler).reconcile({
      key: objectKeyOf(ref(name)),
      lane: 'low',
      signal: new AbortController().signal,
      log: memoryLogger().logger,
    });
  return { clock, cells, plans, reconcile, registry, cache };
}

const configMap = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'shop', labels },
  data: { v: '1' },
});

describe('MigrationReconciler', () => {
  it('moves nothing until the gate of the generation is open, then moves and waits deleteAfter', async () => {
    const name = movingName();
    const { cells, plans, reconcile, clock } = setup();
    cells.a.put(path(name), configMap(name));
    expect(await reconcile(name)).toEqual({});
    expect(cells.b.get(path(name))).toBeUndefined();

    plans.allowMoves(2);
    expect(await reconcile(name)).toEqual({ requeueAfterMs: DELETE_AFTER });
    expect(cells.a.get(path(name))!.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBe(MIGRATED);
    expect(cells.b.get(path(name))!.data).toEqual({ v: '1' });

    // Looked at again early: it waits for the rest of deleteAfter; when due, the old copy goes.
    await clock.advance(DELETE_AFTER / 2);
    expect(await reconcile(name)).toEqual({ requeueAfterMs: DELETE_AFTER / 2 });
    await clock.advance(DELETE_AFTER / 2);
    expect(await reconcile(name)).toEqual({});
    expect(cells.a.get(path(name))).toBeUndefined();
    expect(cells.b.get(path(name))).toBeDefined();
  });

  it('waits for the cache to show its own move instead of reading the cells again, for a while', async () => {
    const name = movingName();
    const { cells, plans, reconcile, clock, cache } = setup();
    cells.a.put(path(name), configMap(name));
    plans.allowMoves(2);
    cache.freeze();
    expect(await reconcile(name)).toEqual({ requeueAfterMs: DELETE_AFTER });
    const requests = () => cells.a.reads.length + cells.a.writes.length + cells.b.reads.length;
    const afterMove = requests();

    // The watch events of the move's writes have not arrived: the unmoved-looking object is not touched.
    await clock.advance(1000);
    expect(await reconcile(name)).toEqual({ requeueAfterMs: 9000 });
    expect(requests()).toBe(afterMove);

    // A cache that never catches up is not waited for forever: after the wait, the cells are read again.
    await clock.advance(9000);
    await reconcile(name);
    expect(requests()).toBeGreaterThan(afterMove);

    // Once the cache shows the move, the object is looked at as usual (its old copy awaits deleteAfter).
    cache.follow();
    expect(await reconcile(name)).toEqual({ requeueAfterMs: DELETE_AFTER - 10_000 });
  });

  it('leaves objects that stay where they are, and the cells’ own kube-root-ca.crt', async () => {
    const { cells, plans, reconcile } = setup();
    plans.allowMoves(2);
    const table = RoutingTable.fromCellSet(parseCellSetSpec(JOINING));
    const staying = Array.from({ length: 100 }, (_, i) => `s-${i}`).find(
      (name) => table.route(table.keyOf({ namespace: 'shop', name })).newCell === 'a',
    )!;
    cells.a.put(path(staying), configMap(staying));
    cells.a.put(path('kube-root-ca.crt'), configMap('kube-root-ca.crt'));
    await reconcile(staying);
    await reconcile('kube-root-ca.crt');
    expect(cells.a.writes).toEqual([]);
    expect(cells.b.objects.size).toBe(0);
  });

  it('never moves what the old cell’s controllers made: a copy would run again in the new cell', async () => {
    const name = movingName();
    const { cells, plans, reconcile } = setup();
    plans.allowMoves(2);
    const made = configMap(name);
    made.metadata.ownerReferences = [
      { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'u-1', controller: true },
    ];
    cells.a.put(path(name), made);

    expect(await reconcile(name)).toEqual({});

    expect(cells.a.writes).toEqual([]);
    expect(cells.b.objects.size).toBe(0);
  });

  it('moves an object promoted from a Down cell’s backup only once its promotion is committed', async () => {
    const name = movingName();
    const { cells, plans, reconcile } = setup();
    plans.allowMoves(2);
    const promoted = configMap(name);
    promoted.metadata.annotations = { [PROMOTED_FROM_ANNOTATION]: 'c' };
    cells.a.put(path(name), promoted);

    expect(await reconcile(name)).toEqual({ requeueAfterMs: 2000 });
    expect(cells.a.writes).toEqual([]);
    expect(cells.b.objects.size).toBe(0);

    // Committed: the mark is gone, and the object moves as any other.
    cells.a.put(path(name), configMap(name));
    expect(await reconcile(name)).toEqual({ requeueAfterMs: DELETE_AFTER });
    expect(cells.b.get(path(name))!.data).toEqual({ v: '1' });
  });

  it('takes the fence down when the CellSet changed back before the move finished', async () => {
    const name = movingName();
    const { cells, plans, reconcile } = setup();
    cells.a.put(path(name), configMap(name, { [REBALANCE_STATUS_LABEL]: MIGRATING }));
    plans.load(parseCellSetSpec(spec({ a: 'Normal' })), 3);
    await reconcile(name);
    expect(cells.a.get(path(name))!.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBeUndefined();
  });

  it('deletes an uncommitted copy in a cell the CellSet no longer names, and keeps the object', async () => {
    const name = movingName();
    const { cells, plans, reconcile } = setup();
    plans.allowMoves(2);
    cells.a.put(path(name), configMap(name));
    cells.b.before = (method) => {
      if (method === 'PATCH') throw new Error('controller killed before the copy was committed');
    };
    cells.a.before = (method, _path, body) => {
      if (method === 'PATCH' && (body as KubeObject).metadata.labels?.[REBALANCE_STATUS_LABEL] === MIGRATED)
        throw new Error('controller killed before the migrated label');
    };
    await expect(reconcile(name)).rejects.toThrow(/killed/);
    cells.a.before = undefined;
    cells.b.before = undefined;
    // The operator takes b out of the CellSet: the object stays in a, the copy in b goes.
    plans.load(parseCellSetSpec(spec({ a: 'Normal', b: 'Down' })), 3);
    await reconcile(name);
    expect(cells.b.get(path(name))).toBeUndefined();
    expect(cells.a.get(path(name))!.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBeUndefined();
  });

  it('starts no more moves than the rate allows: the rest come back when a token is due', async () => {
    const clock = new FakeClock();
    const { cells, plans, reconcile } = setup({ rate: new TokenBucket(2, 1, clock.now()) });
    plans.allowMoves(2);
    const table = RoutingTable.fromCellSet(parseCellSetSpec(JOINING));
    const moving = Array.from({ length: 200 }, (_, i) => `r-${i}`)
      .filter((name) => table.route(table.keyOf({ namespace: 'shop', name })).newCell === 'b')
      .slice(0, 2);
    for (const name of moving) cells.a.put(path(name), configMap(name));
    expect(await reconcile(moving[0]!)).toEqual({ requeueAfterMs: DELETE_AFTER });
    expect(await reconcile(moving[1]!)).toEqual({ requeueAfterMs: 500 });
    expect(cells.b.get(path(moving[1]!))).toBeUndefined();
  });

  it('fences no object while the fence window is full, and holds no worker; a move already fenced goes on', async () => {
    const woken: string[] = [];
    const fences = new FenceWindow({ max: 4, targetMs: 200, wake: (key) => woken.push(key) });
    const { cells, plans, reconcile } = setup({ fences });
    plans.allowMoves(2);
    const table = RoutingTable.fromCellSet(parseCellSetSpec(JOINING));
    const [waiting, resumed] = Array.from({ length: 200 }, (_, i) => `f-${i}`)
      .filter((name) => table.route(table.keyOf({ namespace: 'shop', name })).newCell === 'b')
      .slice(0, 2);
    cells.a.put(path(waiting!), configMap(waiting!));
    cells.a.put(path(resumed!), configMap(resumed!, { [REBALANCE_STATUS_LABEL]: MIGRATING }));
    // The one move the window allows is held elsewhere.
    const held = fences.tryAcquire('elsewhere')!;
    expect(fences.size).toBe(1);

    // Returns at once, nothing fenced; woken when the permit frees.
    expect(await reconcile(waiting!)).toEqual({});
    expect(cells.a.get(path(waiting!))!.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBeUndefined();
    expect(await reconcile(resumed!)).toEqual({ requeueAfterMs: DELETE_AFTER });
    expect(cells.a.get(path(resumed!))!.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBe(MIGRATED);

    held.release(50);
    expect(woken).toEqual([formatObjectKey(ref(waiting!))]);
    expect(await reconcile(waiting!)).toEqual({ requeueAfterMs: DELETE_AFTER });
    expect(cells.a.get(path(waiting!))!.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBe(MIGRATED);
    expect(fences.holding).toBe(0);
  });

  it('counts each outcome in cellfed_rebalance_migrations_total', async () => {
    const name = movingName();
    const { cells, plans, reconcile, registry } = setup();
    plans.allowMoves(2);
    cells.a.put(path(name), configMap(name));
    await reconcile(name);
    const metric = await registry.getSingleMetric('cellfed_rebalance_migrations_total')!.get();
    expect(metric.values).toEqual([expect.objectContaining({ labels: { result: 'moved' }, value: 1 })]);
  });

  it('waits a moment, without an error, for quota share in the new cell, then moves', async () => {
    const name = movingName();
    const { cells, plans, reconcile, registry } = setup();
    plans.allowMoves(2);
    cells.a.put(path(name), configMap(name));
    let refusals = 2;
    cells.b.before = (method) => {
      if (method === 'POST' && refusals-- > 0)
        throw new ApiError(
          403,
          {
            code: 403,
            reason: 'Forbidden',
            message: `configmaps "${name}" is forbidden: exceeded quota: team, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1`,
          },
          'POST',
        );
    };
    expect(await reconcile(name)).toEqual({ requeueAfterMs: 250 });
    expect(cells.a.get(path(name))!.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBe(MIGRATING);
    // A refusal that lasts is tried ever less often.
    expect(await reconcile(name)).toEqual({ requeueAfterMs: 500 });
    expect(await reconcile(name)).toEqual({ requeueAfterMs: DELETE_AFTER });
    expect(cells.b.get(path(name))!.data).toEqual({ v: '1' });
    const metric = await registry.getSingleMetric('cellfed_rebalance_migrations_total')!.get();
    expect(metric.values).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { result: 'quota_wait' }, value: 2 }),
        expect.objectContaining({ labels: { result: 'moved' }, value: 1 }),
      ]),
    );
  });
});
