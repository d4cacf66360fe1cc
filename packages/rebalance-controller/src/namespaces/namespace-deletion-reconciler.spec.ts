import { CELLS_FINALIZER, MIRRORED_FROM_CONTROL_PLANE, MIRRORED_LABEL } from '@cellfed/api';
import { FakeCell, memoryLogger } from '@cellfed/controller-kit/testing';
import type { KubeObject, ObjectMeta } from '@cellfed/federation';

import { PlanHolder } from '../rebalance-plan.ts';
import { configMapCellSet } from '../testing/configmap-cells.ts';
import { NamespaceDeletionReconciler } from './namespace-deletion-reconciler.ts';

const SHOP = '/api/v1/namespaces/shop';

function setup(namespace: ObjectMeta | undefined, options: { down?: string; unengaged?: string } = {}) {
  const plans = new PlanHolder();
  const state = (id: string) => (id === options.down ? 'Down' : 'Normal');
  plans.load(configMapCellSet({ a: state('a'), b: state('b'), c: state('c') }), 1);
  const cells = new Map(['a', 'b', 'c'].map((id) => [id, new FakeCell(id)]));
  const patches: { path: string; body: unknown }[] = [];
  const controlPlane = {
    request: async <T>(method: string, path: string, request: { body?: unknown } = {}): Promise<T> => {
      if (method !== 'PATCH') throw new Error(`unexpected ${method} ${path}`);
      patches.push({ path, body: request.body });
      return undefined as T;
    },
  };
  const reconciler = new NamespaceDeletionReconciler({
    plans,
    controlPlane,
    namespace: (name) => (name === namespace?.name ? namespace : undefined),
    cell: (id) => {
      const client = cells.get(id);
      return client && id !== options.unengaged ? { id, client } : undefined;
    },
  });
  const { logger } = memoryLogger();
  const reconcile = (name = 'shop') =>
    reconciler.reconcile({ key: { name }, lane: 'high', signal: new AbortController().signal, log: logger });
  /** The namespace's copy in a cell, as the mirror makes it (or, `own`, one the cell had of its own). */
  const copyIn = (cell: string, own = false) =>
    cells.get(cell)!.put(SHOP, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: 'shop',
        ...(own ? {} : { labels: { [MIRRORED_LABEL]: MIRRORED_FROM_CONTROL_PLANE } }),
      },
    } as KubeObject);
  return { cells, patches, reconcile, copyIn };
}

const live: ObjectMeta = { name: 'shop', uid: 'uid-1', resourceVersion: '7' };
const deleting = (finalizers = [CELLS_FINALIZER]): ObjectMeta => ({
  ...live,
  deletionTimestamp: '2026-12-06T12:00:00Z',
  finalizers,
});

describe('NamespaceDeletionReconciler', () => {
  it('puts the finalizer on a namespace, on the version read', async () => {
    const { patches, reconcile } = setup(live);
    expect(await reconcile()).toEqual({});
    expect(patches).toEqual([
      {
        path: SHOP,
        body: [
          { op: 'test', path: '/metadata/uid', value: 'uid-1' },
          { op: 'test', path: '/metadata/resourceVersion', value: '7' },
          { op: 'add', path: '/metadata/finalizers', value: [CELLS_FINALIZER] },
        ],
      },
    ]);
  });

  it("keeps another controller's finalizers beside its own", async () => {
    const { patches, reconcile } = setup({ ...live, finalizers: ['example.com/keep'] });
    await reconcile();
    expect(patches[0]?.body).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'test', path: '/metadata/finalizers', value: ['example.com/keep'] },
      { op: 'add', path: '/metadata/finalizers', value: ['example.com/keep', CELLS_FINALIZER] },
    ]);
  });

  it("writes nothing for a namespace that has it, nor for an apiserver's own namespaces", async () => {
    const finalized = setup({ ...live, finalizers: [CELLS_FINALIZER] });
    await finalized.reconcile();
    const own = setup({ name: 'kube-system', uid: 'k', resourceVersion: '1' });
    await own.reconcile('kube-system');
    expect([finalized.patches, own.patches]).toEqual([[], []]);
  });

  it('deletes the copies of a namespace being deleted and keeps the finalizer while a cell has one', async () => {
    const { cells, patches, reconcile, copyIn } = setup(deleting());
    copyIn('a');
    copyIn('b');
    expect(await reconcile()).toEqual({ requeueAfterMs: 2000 });
    expect([...cells.values()].map((cell) => cell.writes)).toEqual([
      [{ method: 'DELETE', path: SHOP }],
      [{ method: 'DELETE', path: SHOP }],
      [],
    ]);
    expect(patches).toEqual([]);
  });

  it('takes the finalizer off once no live cell has the copy, leaving the others', async () => {
    const { patches, reconcile, copyIn } = setup(deleting(['example.com/keep', CELLS_FINALIZER]));
    copyIn('c', true);
    expect(await reconcile()).toEqual({});
    expect(patches[0]?.body).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'test', path: '/metadata/finalizers', value: ['example.com/keep', CELLS_FINALIZER] },
      { op: 'add', path: '/metadata/finalizers', value: ['example.com/keep'] },
    ]);
  });

  it('waits for a live cell it cannot reach, and not for a Down one', async () => {
    const unreachable = setup(deleting(), { unengaged: 'b' });
    expect(await unreachable.reconcile()).toEqual({ requeueAfterMs: 2000 });
    expect(unreachable.patches).toEqual([]);
    const down = setup(deleting(), { down: 'b', unengaged: 'b' });
    expect(await down.reconcile()).toEqual({});
    expect(down.patches).toHaveLength(1);
  });
});
