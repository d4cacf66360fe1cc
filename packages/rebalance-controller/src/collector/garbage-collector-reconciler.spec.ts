import {
  HELD_OWNERS_ANNOTATION,
  ORIGIN_UID_ANNOTATION,
  FOREGROUND_FINALIZER,
  ORPHAN_FINALIZER,
  parseCellSetSpec,
} from '@cellfed/api';
import { ApiError } from '@cellfed/controller-kit';
import { FakeCell, fakeCopies, memoryLogger } from '@cellfed/controller-kit/testing';
import { MIGRATING, REBALANCE_STATUS_LABEL, RoutingTable } from '@cellfed/hashing';
import { Registry } from 'prom-client';
import {
  type KubeObject,
  formatHeldOwners,
  type CellularObjectRef,
  type OwnerReference,
} from '@cellfed/federation';

import { PlannedObjects } from '../planned-objects.ts';
import { DependentsIndex, ownerName } from './dependents-index.ts';
import { GarbageCollectorReconciler } from './garbage-collector-reconciler.ts';
import { OwnerKinds } from './owner-kinds.ts';
import { PlanHolder } from '../rebalance-plan.ts';
import { RebalanceMetrics } from '../rebalance-metrics.ts';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const SPEC = parseCellSetSpec({
  cellularResources: [CONFIGMAPS],
  cells: ['a', 'b'].map((id) => ({ id, state: 'Normal' as const, kubeconfigSecretRef: { name: id } })),
});
const table = RoutingTable.fromCellSet(SPEC);
const cellOf = (name: string) => table.route(table.keyOf({ namespace: 'shop', name })).oldCell as 'a' | 'b';
const path = (name: string) => `/api/v1/namespaces/shop/configmaps/${name}`;
const RESYNC = 60_000;

const ownerRef = (kind: string, name: string, uid: string, apiVersion = 'v1'): OwnerReference => ({
  apiVersion,
  kind,
  name,
  uid,
});

function setup(
  options: { synced?: boolean; forbidden?: boolean; notCachedYet?: (ref: CellularObjectRef) => boolean } = {},
) {
  const cells = { a: new FakeCell('a'), b: new FakeCell('b') };
  const controlPlane = new FakeCell('control-plane');
  const plans = new PlanHolder();
  plans.load(SPEC, 1);
  const copies = fakeCopies(Object.values(cells), CONFIGMAPS);
  const discovery = {
    '/api/v1': {
      resources: [
        { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
        { name: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
        { name: 'serviceaccounts/token', kind: 'TokenRequest', namespaced: true },
      ],
    },
  } as Record<string, unknown>;
  /** The uids of control-plane owners the router recorded an orphaning delete of (their Events). */
  const orphanings = new Set<string>();
  /** Events of the same reason about other uids, by other controllers than the router. */
  const forgedOrphanings = new Set<string>();
  const askControlPlane = <T>(method: string, requested: string): Promise<T> => {
    if (requested in discovery) return Promise.resolve(discovery[requested] as T);
    const events = /\/events\?fieldSelector=([^&]*)/.exec(requested);
    if (events && !options.forbidden) {
      // The field selector as the apiserver reads it: every term must hold.
      const terms = Object.fromEntries(
        decodeURIComponent(events[1]!)
          .split(',')
          .map((term) => term.split('=') as [string, string]),
      );
      const recorded = [
        ...[...orphanings].map((uid) => ({ uid, reportingComponent: 'cellfed.io/cell-router' })),
        ...[...forgedOrphanings].map((uid) => ({ uid, reportingComponent: 'someone-else' })),
      ];
      const items = recorded
        .filter(
          (event) =>
            terms['involvedObject.uid'] === event.uid &&
            terms['reason'] === 'OrphanHeldDependents' &&
            (terms['reportingComponent'] ?? event.reportingComponent) === event.reportingComponent,
        )
        .map(() => ({ reason: 'OrphanHeldDependents' }));
      return Promise.resolve({ items } as T);
    }
    if (requested.startsWith('/apis/'))
      return Promise.reject(new ApiError(404, { code: 404, message: 'no group' }, `GET ${requested}`));
    if (options.forbidden)
      return Promise.reject(new ApiError(403, { code: 403, message: 'forbidden' }, `GET ${requested}`));
    return controlPlane.request<T>(method, requested);
  };
  const metrics = new RebalanceMetrics(new Registry());
  const index = new DependentsIndex();
  const reconciler = new GarbageCollectorReconciler({
    copies: {
      ...copies,
      ...(options.synced === false ? { synced: () => false } : {}),
      copiesOf: (ref: CellularObjectRef) => (options.notCachedYet?.(ref) ? new Map() : copies.copiesOf(ref)),
    },
    cell: (id) => (id in cells ? { id, client: cells[id as 'a' | 'b'] } : undefined),
    controlPlane: { request: askControlPlane },
    kinds: new OwnerKinds({ request: askControlPlane }, () => 0),
    namespaceLabels: () => undefined,
    dependents: (owner) => index.dependents(owner),
    metrics,
    resyncMs: RESYNC,
  });
  /** Puts a ConfigMap in the cell the ring names for it. */
  const put = (name: string, annotations: Record<string, string> = {}, labels: Record<string, string> = {}) =>
    cells[cellOf(name)].put(path(name), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'shop', annotations, labels },
    });
  const dependent = (...owners: OwnerReference[]) =>
    put('dependent', { [HELD_OWNERS_ANNOTATION]: formatHeldOwners(owners) });
  const reconcile = (name = 'dependent') =>
    new PlannedObjects(plans, reconciler).reconcile({
      key: { resource: 'configmaps', namespace: 'shop', name },
      lane: 'high',
      signal: new AbortController().signal,
      log: memoryLogger().logger,
    });
  const stored = () => cells[cellOf('dependent')].get(path('dependent'));
  const serviceAccount = (name: string) =>
    controlPlane.put(`/api/v1/namespaces/shop/serviceaccounts/${name}`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace: 'shop' },
    });
  return {
    cells,
    reconcile,
    put,
    dependent,
    stored,
    serviceAccount,
    orphanings,
    forgedOrphanings,
    metrics,
    index,
  };
}

const uidOf = (object: KubeObject) => object.metadata.uid!;

describe('GarbageCollectorReconciler', () => {
  it('leaves an object whose owners exist, in its cell or in the control plane, and looks again later', async () => {
    const { put, dependent, reconcile, stored, serviceAccount } = setup();
    const owner = put('owner');
    const account = serviceAccount('builder');
    dependent(
      ownerRef('ConfigMap', 'owner', uidOf(owner)),
      ownerRef('ServiceAccount', 'builder', uidOf(account)),
    );
    expect(await reconcile()).toEqual({ requeueAfterMs: RESYNC });
    expect(stored()).toBeDefined();
  });

  it('deletes an object whose every owner is gone or was recreated under another uid', async () => {
    const { put, dependent, reconcile, stored, metrics } = setup();
    put('owner');
    dependent(
      ownerRef('ConfigMap', 'owner', 'uid-of-an-earlier-owner'),
      ownerRef('ServiceAccount', 'gone', 'sa-1'),
    );
    expect(await reconcile()).toEqual({});
    expect(stored()).toBeUndefined();
    expect((await metrics.collected.get()).values).toEqual([
      expect.objectContaining({ labels: { action: 'deleted' }, value: 1 }),
    ]);
  });

  it('keeps a dependent whose owner is in its cell but not in the caches yet (a live read says so)', async () => {
    // The caches lag: they have the dependent, not yet its owner.
    const { put, dependent, reconcile, stored } = setup({ notCachedYet: (ref) => ref.name === 'owner' });
    const owner = put('owner');
    dependent(ownerRef('ConfigMap', 'owner', uidOf(owner)));
    expect(await reconcile()).toEqual({ requeueAfterMs: RESYNC });
    expect(stored()).toBeDefined();
  });

  it('knows a moved owner by the uid clients saw before the move', async () => {
    const { put, dependent, reconcile, stored } = setup();
    put('owner', { [ORIGIN_UID_ANNOTATION]: 'first-uid' });
    dependent(ownerRef('ConfigMap', 'owner', 'first-uid'));
    await reconcile();
    expect(stored()).toBeDefined();
  });

  it('removes only the references to owners that are gone when others remain', async () => {
    const { put, dependent, reconcile, stored } = setup();
    const owner = put('owner');
    dependent(ownerRef('ConfigMap', 'owner', uidOf(owner)), ownerRef('ConfigMap', 'gone', 'x'));
    expect(await reconcile()).toEqual({ requeueAfterMs: RESYNC });
    expect(stored()!.metadata.annotations).toEqual({
      [HELD_OWNERS_ANNOTATION]: formatHeldOwners([ownerRef('ConfigMap', 'owner', uidOf(owner))]),
    });
  });

  it('decides nothing while an owner moves, a cell is not listed, a kind is unknown or unreadable', async () => {
    const moving = setup();
    moving.put('owner', {}, { [REBALANCE_STATUS_LABEL]: MIGRATING });
    moving.dependent(ownerRef('ConfigMap', 'owner', 'other-uid'));
    expect(await moving.reconcile()).toEqual({ requeueAfterMs: 5000 });
    expect(moving.stored()).toBeDefined();

    const unlisted = setup({ synced: false });
    unlisted.dependent(ownerRef('ConfigMap', 'gone', 'x'));
    expect(await unlisted.reconcile()).toEqual({ requeueAfterMs: 5000 });
    expect(unlisted.stored()).toBeDefined();

    const unknownKind = setup();
    unknownKind.dependent(ownerRef('Widget', 'w', 'x', 'example.com/v1'));
    expect(await unknownKind.reconcile()).toEqual({ requeueAfterMs: 5000 });
    expect(unknownKind.stored()).toBeDefined();

    const forbidden = setup({ forbidden: true });
    forbidden.dependent(ownerRef('ServiceAccount', 'gone', 'x'));
    expect(await forbidden.reconcile()).toEqual({ requeueAfterMs: RESYNC });
    expect(forbidden.stored()).toBeDefined();
  });

  it('leaves objects without held owners and hand-edited annotations alone', async () => {
    const plain = setup();
    plain.put('dependent');
    expect(await plain.reconcile()).toEqual({});
    const edited = setup();
    edited.put('dependent', { [HELD_OWNERS_ANNOTATION]: 'not json' });
    expect(await edited.reconcile()).toEqual({});
    expect(edited.stored()).toBeDefined();
  });

  it('orphans the held dependents of an owner deleted with orphan propagation, then releases the owner', async () => {
    const { cells, put, dependent, reconcile, stored, index } = setup();
    const owner = put('owner');
    const other = ownerRef('ServiceAccount', 'builder', 'sa-1');
    dependent(ownerRef('ConfigMap', 'owner', uidOf(owner)), other);
    index.set('configmaps/shop/dependent', new Set([ownerName('', 'shop', 'owner')]));
    const ownerPath = path('owner');
    const ownerCell = cells[cellOf('owner')];
    ownerCell.put(ownerPath, {
      ...owner,
      metadata: {
        ...owner.metadata,
        deletionTimestamp: '2026-11-25T00:00:00Z',
        finalizers: ['keep', ORPHAN_FINALIZER],
      },
    });
    expect(await reconcile('owner')).toEqual({});
    expect(stored()!.metadata.annotations).toEqual({ [HELD_OWNERS_ANNOTATION]: formatHeldOwners([other]) });
    expect(ownerCell.get(ownerPath)!.metadata.finalizers).toEqual(['keep']);
  });

  it('keeps a dependent of a control-plane owner deleted with orphan propagation, without the reference', async () => {
    const { put, dependent, reconcile, stored, orphanings, metrics } = setup();
    const owner = put('owner');
    orphanings.add('sa-1');
    dependent(ownerRef('ServiceAccount', 'gone', 'sa-1'));
    expect(await reconcile()).toEqual({ requeueAfterMs: RESYNC });
    expect(stored()?.metadata.annotations?.[HELD_OWNERS_ANNOTATION]).toBeUndefined();
    expect((await metrics.collected.get()).values).toEqual([
      expect.objectContaining({ labels: { action: 'references_removed' }, value: 1 }),
    ]);

    // Beside an owner that went in the background, it goes: that owner was the last one it had.
    orphanings.add('sa-2');
    dependent(ownerRef('ServiceAccount', 'orphaning', 'sa-2'), ownerRef('ConfigMap', 'owner', 'earlier-uid'));
    expect(uidOf(owner)).not.toBe('earlier-uid');
    expect(await reconcile()).toEqual({});
    expect(stored()).toBeUndefined();
  });

  it("takes an orphaning record only from the router: another controller's Event of the same reason is not one", async () => {
    const { dependent, reconcile, stored, forgedOrphanings } = setup();
    forgedOrphanings.add('sa-1');
    dependent(ownerRef('ServiceAccount', 'gone', 'sa-1'));
    expect(await reconcile()).toEqual({});
    expect(stored()).toBeUndefined();
  });

  it('deletes the held dependents of an owner deleted in the foreground first, then releases the owner', async () => {
    const { cells, put, dependent, reconcile, stored, index } = setup();
    const owner = put('owner');
    put('shared', {
      [HELD_OWNERS_ANNOTATION]: formatHeldOwners([
        ownerRef('ConfigMap', 'owner', uidOf(owner)),
        ownerRef('ServiceAccount', 'builder', 'sa-1'),
      ]),
    });
    dependent(ownerRef('ConfigMap', 'owner', uidOf(owner)));
    for (const name of ['dependent', 'shared'])
      index.set(`configmaps/shop/${name}`, new Set([ownerName('', 'shop', 'owner')]));
    const ownerPath = path('owner');
    const ownerCell = cells[cellOf('owner')];
    ownerCell.put(ownerPath, {
      ...owner,
      metadata: {
        ...owner.metadata,
        deletionTimestamp: '2026-11-25T00:00:00Z',
        finalizers: [FOREGROUND_FINALIZER, 'foregroundDeletion'],
      },
    });
    // The only dependent of the owner is deleted; one with another owner only loses the reference; the
    // owner waits for the caches to show the deleted one gone.
    expect(await reconcile('owner')).toEqual({ requeueAfterMs: expect.any(Number) });
    expect(stored()).toBeUndefined();
    expect(cells[cellOf('shared')].get(path('shared'))!.metadata.annotations).toEqual({
      [HELD_OWNERS_ANNOTATION]: formatHeldOwners([ownerRef('ServiceAccount', 'builder', 'sa-1')]),
    });
    expect(ownerCell.get(ownerPath)!.metadata.finalizers).toEqual([
      FOREGROUND_FINALIZER,
      'foregroundDeletion',
    ]);
    // Gone from the caches: the owner is released.
    expect(await reconcile('owner')).toEqual({});
    expect(ownerCell.get(ownerPath)!.metadata.finalizers).toEqual(['foregroundDeletion']);
  });
});
