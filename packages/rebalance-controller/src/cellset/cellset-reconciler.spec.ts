import {
  BACKUP_CELL_LABEL,
  LOADED_GENERATION_ANNOTATION,
  PRIMARY_CELL_LABEL,
  parseCellSet,
} from '@cellfed/api';
import { ApiError, CellSetReader } from '@cellfed/controller-kit';
import { FakeCell, FakeClock, fakeCopies, memoryLogger } from '@cellfed/controller-kit/testing';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL, RoutingTable } from '@cellfed/hashing';
import { Registry } from 'prom-client';
import { cellBackupPath, type KubeObject, type RouterLease } from '@cellfed/federation';

import { CellSetReconciler } from './cellset-reconciler.ts';
import { MirrorState } from '../mirror/mirror-state.ts';
import { PlanHolder } from '../rebalance-plan.ts';
import { RebalanceMetrics } from '../rebalance-metrics.ts';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

function cellSet(generation: number, cells: Record<string, string>): KubeObject {
  return {
    apiVersion: 'cells.cellfed.io/v1alpha1',
    kind: 'CellSet',
    metadata: { name: 'default', generation, resourceVersion: `rv-${generation}`, uid: 'u' },
    spec: {
      cellularResources: [CONFIGMAPS],
      cells: Object.entries(cells).map(([id, state]) => ({ id, state, kubeconfigSecretRef: { name: id } })),
    },
  };
}

const CELLSET_PATH = '/apis/cells.cellfed.io/v1alpha1/cellsets/default';

const plansFor = (object: KubeObject) => parseCellSet(object).spec;

/** A ConfigMap name in `ns` that moves from a into b when b joins. */
function movingIntoB(): string {
  const table = RoutingTable.fromCellSet(plansFor(cellSet(2, { a: 'Normal', b: 'Joining' })));
  return Array.from({ length: 100 }, (_, i) => `cm-${i}`).find(
    (candidate) => table.route(table.keyOf({ namespace: 'ns', name: candidate })).newCell === 'b',
  )!;
}

function lease(generation: number, renewedAt: number): RouterLease {
  return {
    metadata: { name: 'cell-router-r1', annotations: { [LOADED_GENERATION_ANNOTATION]: String(generation) } },
    spec: { holderIdentity: 'r1', leaseDurationSeconds: 30, renewTime: new Date(renewedAt).toISOString() },
  };
}

function setup(object: KubeObject) {
  const clock = new FakeClock();
  // `object` is what the cache shows; `server` what the control plane holds (the same unless a test makes
  // the cache lag).
  const state = { object, server: object, leases: [] as RouterLease[], enqueued: 0 };
  const events: string[] = [];
  const writes: { method: string; path: string; body: unknown }[] = [];
  const cells = { a: new FakeCell('a'), b: new FakeCell('b'), c: new FakeCell('c') };
  const mirror = new MirrorState();
  const plans = new PlanHolder();
  const reader = new CellSetReader();
  const reconciler = new CellSetReconciler({
    pool: {
      cellSetName: 'default',
      cellSetObject: () => state.object,
      cellSet: () => reader.read(state.object),
      get: (id: string) =>
        id in cells ? ({ id, client: cells[id as keyof typeof cells] } as never) : undefined,
      recordOnCellSet: async (type, reason, note) => {
        events.push(`${type} ${reason}: ${note}`);
      },
    },
    controlPlane: {
      request: async <T>(method: string, path: string, options: { body?: unknown } = {}) => {
        if (path === CELLSET_PATH && method === 'GET') return structuredClone(state.server) as T;
        if (path === CELLSET_PATH) {
          const expected = (options.body as { metadata?: { resourceVersion?: string } }).metadata
            ?.resourceVersion;
          if (expected !== state.server.metadata.resourceVersion)
            throw new ApiError(409, { reason: 'Conflict', code: 409 }, `${method} ${path}`);
        }
        writes.push({ method, path, body: options.body });
        return undefined as T;
      },
    },
    plans,
    copies: fakeCopies(Object.values(cells), CONFIGMAPS),
    mirror,
    routerLeases: () => state.leases,
    namespaceLabels: () => undefined,
    enqueueAllObjects: () => state.enqueued++,
    metrics: new RebalanceMetrics(new Registry()),
    clock,
  });
  const reconcile = (logger = memoryLogger().logger) =>
    reconciler.reconcile({
      key: { name: 'default' },
      lane: 'high',
      signal: new AbortController().signal,
      log: logger,
    });
  const lastStatus = () =>
    (
      writes.filter((write) => write.path.endsWith('/status')).at(-1)?.body as {
        status: Record<string, unknown>;
      }
    ).status as { phase: string; conditions: { type: string; status: string; reason: string }[] };
  const condition = (type: string) => lastStatus().conditions.find((candidate) => candidate.type === type);
  return { clock, state, events, writes, cells, mirror, plans, reconcile, lastStatus, condition };
}

describe('CellSetReconciler', () => {
  it('refuses an invalid CellSet with a condition and an event, and keeps the last good one', async () => {
    const { state, plans, reconcile, lastStatus, condition, events } = setup(cellSet(1, { a: 'Normal' }));
    await reconcile();
    state.object = cellSet(2, { a: 'Joining' });
    await reconcile();
    expect(lastStatus().phase).toBe('Invalid');
    expect(condition('Valid')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(events.some((event) => event.startsWith('Warning InvalidCellSet'))).toBe(true);
    expect(plans.current()!.generation).toBe(1);
  });

  it('moves nothing until the joining cell is mirrored and every live router routes with the generation', async () => {
    const { clock, state, mirror, plans, cells, reconcile, condition, events } = setup(
      cellSet(2, { a: 'Normal', b: 'Joining' }),
    );
    // One object that moves to b, so the rebalance is still running after the gate opens.
    const name = movingIntoB();
    cells.a.put(`/api/v1/namespaces/ns/configmaps/${name}`, { metadata: { name, namespace: 'ns' } });
    state.leases = [lease(1, clock.now())];
    mirror.failed('b', 'clusterroles.rbac.authorization.k8s.io: 403 Forbidden');
    await reconcile();
    expect(condition('Blocked')).toMatchObject({ status: 'True', reason: 'MirrorPending' });
    // Why a cell's mirror pass fails is in the condition, so the operator need not read the logs.
    expect(condition('Blocked')).toMatchObject({
      message: expect.stringContaining('b (clusterroles.rbac.authorization.k8s.io: 403 Forbidden)'),
    });
    mirror.set('a', true);
    mirror.set('b', true);
    await reconcile();
    expect(condition('Blocked')).toMatchObject({ status: 'True', reason: 'RoutersBehind' });
    expect(condition('RoutersAcknowledged')).toMatchObject({ status: 'False' });
    expect(plans.current()!.movesAllowed).toBe(false);
    expect(state.enqueued).toBe(0);

    state.leases = [lease(2, clock.now())];
    await reconcile();
    expect(plans.current()!.movesAllowed).toBe(true);
    expect(state.enqueued).toBe(1);
    expect(condition('RoutersAcknowledged')).toMatchObject({ status: 'True' });
    expect(events.some((event) => event.startsWith('Normal RebalanceStarted'))).toBe(true);
  });

  it('queues every pending object again when a rebalance has moved nothing for 30 s, and says what it waits for', async () => {
    const { clock, state, mirror, cells, reconcile } = setup(cellSet(2, { a: 'Normal', b: 'Joining' }));
    const name = movingIntoB();
    // Its old copy is being deleted and a finalizer holds it: it will not move, and nothing else will.
    cells.a.put(`/api/v1/namespaces/ns/configmaps/${name}`, {
      metadata: {
        name,
        namespace: 'ns',
        deletionTimestamp: '2026-11-25T10:00:00Z',
        finalizers: ['example.com/hold'],
      },
    });
    mirror.set('a', true);
    mirror.set('b', true);
    state.leases = [lease(2, clock.now())];
    const logs = memoryLogger();
    const reconcileLogged = () => reconcile(logs.logger);
    await reconcileLogged();
    expect(state.enqueued).toBe(1); // the rebalance started
    await clock.advance(29_000);
    await reconcileLogged();
    expect(state.enqueued).toBe(1);
    await clock.advance(2000);
    await reconcileLogged();
    expect(state.enqueued).toBe(2);
    const warning = logs.lines.find(
      (line) => line['msg'] === 'rebalance stalled; queueing every pending object again',
    );
    expect(warning).toMatchObject({
      pending: 1,
      examples: [
        {
          object: `configmaps/ns/${name}`,
          cell: 'a',
          newCell: 'b',
          deleting: true,
          finalizers: ['example.com/hold'],
        },
      ],
    });
    // Not again before another 30 s.
    await clock.advance(10_000);
    await reconcileLogged();
    expect(state.enqueued).toBe(2);
  });

  it('queues a move left in flight again: a leader that died mid-move leaves a fence nobody works on', async () => {
    const { clock, state, mirror, cells, reconcile } = setup(cellSet(2, { a: 'Normal', b: 'Joining' }));
    const name = movingIntoB();
    cells.a.put(`/api/v1/namespaces/ns/configmaps/${name}`, {
      metadata: { name, namespace: 'ns', labels: { [REBALANCE_STATUS_LABEL]: MIGRATING } },
    });
    mirror.set('a', true);
    mirror.set('b', true);
    state.leases = [lease(2, clock.now())];
    const logs = memoryLogger();
    await reconcile(logs.logger);
    expect(state.enqueued).toBe(1);
    await clock.advance(31_000);
    await reconcile(logs.logger);
    expect(state.enqueued).toBe(2);
    expect(
      logs.lines.find((line) => line['msg'] === 'rebalance stalled; queueing every pending object again'),
    ).toMatchObject({ pending: 1, inFlight: 1 });
  });

  it('does not wait for a router that stopped renewing its Lease', async () => {
    const { clock, state, mirror, plans, reconcile } = setup(cellSet(2, { a: 'Normal', b: 'Joining' }));
    mirror.set('a', true);
    mirror.set('b', true);
    state.leases = [lease(1, clock.now())];
    await clock.advance(31_000);
    await reconcile();
    expect(plans.current()!.movesAllowed).toBe(true);
  });

  it('when nothing is left to move: Joining → Normal, Draining cells leave, the Secret is left (said in an event)', async () => {
    const { mirror, cells, writes, reconcile, events } = setup(
      cellSet(3, { a: 'Draining', b: 'Joining', c: 'Normal' }),
    );
    for (const id of ['a', 'b', 'c']) mirror.set(id, true);
    cells.a.put('/api/v1/namespaces/ns/configmaps/x', {
      metadata: { name: 'x', namespace: 'ns', labels: { [REBALANCE_STATUS_LABEL]: MIGRATED } },
    });
    cells.b.put('/api/v1/namespaces/ns/configmaps/x', { metadata: { name: 'x', namespace: 'ns' } });
    await reconcile();
    const finish = writes.find((write) => write.path === CELLSET_PATH);
    expect(finish?.body).toEqual({
      metadata: { resourceVersion: 'rv-3' },
      spec: {
        cells: [
          { id: 'b', state: 'Normal', kubeconfigSecretRef: { name: 'b' } },
          { id: 'c', state: 'Normal', kubeconfigSecretRef: { name: 'c' } },
        ],
      },
    });
    expect(events.some((event) => event.startsWith('Normal RebalanceFinished'))).toBe(true);
    expect(events.find((event) => event.includes('CellRemoved'))).toContain('left for the operator');
  });
  it('finishes a join only once no live cell holds a Down cell’s backup not promoted yet', async () => {
    const { mirror, cells, writes, reconcile, lastStatus, condition, events } = setup(
      cellSet(4, { a: 'Normal', b: 'Joining', c: 'Down' }),
    );
    for (const id of ['a', 'b']) mirror.set(id, true);
    const backup = cellBackupPath('configmaps-0123');
    cells.a.put(backup, {
      apiVersion: 'cells.cellfed.io/v1alpha1',
      kind: 'CellBackup',
      metadata: {
        name: 'configmaps-0123',
        namespace: 'cellfed-backups',
        labels: { [PRIMARY_CELL_LABEL]: 'c', [BACKUP_CELL_LABEL]: 'a' },
      },
    });
    // Nothing left to move, but the promotion in a (then the move into b) is still to come.
    expect(await reconcile()).toEqual({ requeueAfterMs: 2000 });
    expect(writes.some((write) => write.path === CELLSET_PATH)).toBe(false);
    expect(lastStatus().phase).toBe('Blocked');
    expect(condition('Blocked')).toMatchObject({ status: 'True', reason: 'PromotionsPending' });
    expect(events.find((event) => event.includes('PromotionsPending'))).toContain('c not promoted yet in: a');

    // Promoted (the backup controller deletes the backup once the object is written anew): it finishes.
    cells.a.objects.delete(backup);
    await reconcile();
    expect(writes.find((write) => write.path === CELLSET_PATH)?.body).toMatchObject({
      spec: {
        cells: [
          { id: 'a', state: 'Normal' },
          { id: 'b', state: 'Normal' },
          { id: 'c', state: 'Down' },
        ],
      },
    });
  });

  /** A drain with nothing left to move: a finished migration of x from a (Draining) to b. */
  function finishedDrain() {
    const harness = setup(cellSet(3, { a: 'Draining', b: 'Normal' }));
    for (const id of ['a', 'b']) harness.mirror.set(id, true);
    harness.cells.a.put('/api/v1/namespaces/ns/configmaps/x', {
      metadata: { name: 'x', namespace: 'ns', labels: { [REBALANCE_STATUS_LABEL]: MIGRATED } },
    });
    harness.cells.b.put('/api/v1/namespaces/ns/configmaps/x', { metadata: { name: 'x', namespace: 'ns' } });
    return harness;
  }

  it('finishes at the CellSet’s own resourceVersion when the cache lags behind it (its status write, a slow watch)', async () => {
    const { state, writes, reconcile, events } = finishedDrain();
    state.server = {
      ...state.object,
      metadata: { ...state.object.metadata, resourceVersion: 'rv-3-status' },
    };
    await reconcile();
    expect(writes.filter((write) => write.path === CELLSET_PATH).map((write) => write.body)).toEqual([
      {
        metadata: { resourceVersion: 'rv-3-status' },
        spec: { cells: [{ id: 'b', state: 'Normal', kubeconfigSecretRef: { name: 'b' } }] },
      },
    ]);
    expect(events.filter((event) => event.startsWith('Normal RebalanceFinished'))).toHaveLength(1);
  });

  it('does not finish a CellSet whose spec changed meanwhile: the new generation is planned first', async () => {
    const { state, writes, reconcile, events } = finishedDrain();
    state.server = cellSet(4, { a: 'Normal', b: 'Normal' });
    await expect(reconcile()).resolves.toEqual({ requeue: true });
    expect(writes.some((write) => write.path === CELLSET_PATH)).toBe(false);
    expect(events.some((event) => event.startsWith('Normal RebalanceFinished'))).toBe(false);
  });
});
