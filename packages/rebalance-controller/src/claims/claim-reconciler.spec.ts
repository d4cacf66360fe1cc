import { FOLLOWER_LABEL, parseCellSetSpec } from '@cellfed/api';
import { FakeCell, memoryLogger } from '@cellfed/controller-kit/testing';
import { type KubeObject } from '@cellfed/federation';

import { ClaimReconciler, type PersistentVolumeClaim } from './claim-reconciler.ts';
import { PlanHolder } from '../rebalance-plan.ts';

const CLAIM = '/api/v1/namespaces/shop/persistentvolumeclaims/data';

function setup(options: { down?: string; unengaged?: string } = {}) {
  const plans = new PlanHolder();
  plans.load(
    parseCellSetSpec({
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
  let naming: string[] = [];
  const reconciler = new ClaimReconciler({
    plans,
    controlPlane,
    claim: () => controlPlane.get(CLAIM) as PersistentVolumeClaim | undefined,
    cellsNaming: () => naming,
    cell: (id) => {
      const client = cells.get(id);
      return client && id !== options.unengaged ? { id, client } : undefined;
    },
  });
  const { logger, lines } = memoryLogger();
  const reconcile = () =>
    reconciler.reconcile({
      key: { namespace: 'shop', name: 'data' },
      lane: 'high',
      signal: new AbortController().signal,
      log: logger,
    });
  const makeClaim = (storage = '1Gi') =>
    controlPlane.put(CLAIM, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'shop', labels: { app: 'db' } },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, storageClassName: '' },
    } as KubeObject);
  const copyIn = (cell: string) => cells.get(cell)!.get(CLAIM) as PersistentVolumeClaim | undefined;
  /** What the cell's volume binder does: binds the copy. */
  const bindIn = (cell: string) => {
    const copy = copyIn(cell)!;
    cells.get(cell)!.put(CLAIM, {
      ...copy,
      spec: { ...copy.spec, volumeName: 'pv-1' },
      status: { phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] },
    } as KubeObject);
  };
  const shown = () => (controlPlane.get(CLAIM) as PersistentVolumeClaim).status;
  const nameFrom = (...ids: string[]) => (naming = ids);
  return { cells, controlPlane, reconcile, makeClaim, copyIn, bindIn, shown, nameFrom, lines };
}

describe('ClaimReconciler', () => {
  it('places the claim in the cell whose pods mount it, and shows the volume bound there', async () => {
    const { reconcile, makeClaim, copyIn, bindIn, shown, nameFrom } = setup();
    makeClaim();
    await reconcile();
    expect(['a', 'b', 'c'].map(copyIn)).toEqual([undefined, undefined, undefined]); // nobody mounts it yet

    nameFrom('b');
    await reconcile();
    expect(copyIn('a')).toBeUndefined();
    expect(copyIn('b')?.metadata.labels).toEqual({ app: 'db', [FOLLOWER_LABEL]: 'control-plane' });
    expect(copyIn('b')?.spec).toEqual({
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName: '',
    });
    bindIn('b');
    await reconcile();
    expect(shown()).toEqual({ phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] });
  });

  it('keeps a claim where it is when its pods move or another cell names it too: storage does not move', async () => {
    const { reconcile, makeClaim, copyIn, bindIn, nameFrom, lines } = setup();
    makeClaim();
    nameFrom('b');
    await reconcile();
    bindIn('b');
    nameFrom('a', 'c');
    await reconcile();
    expect([copyIn('a'), copyIn('c')]).toEqual([undefined, undefined]);
    expect(copyIn('b')?.spec?.volumeName).toBe('pv-1');
    expect(lines).toContainEqual(
      expect.objectContaining({
        cell: 'b',
        waiting: ['a', 'c'],
        msg: 'a claim is named from several cells: it is in one, and pods in the others that mount it wait',
      }),
    );
  });

  it('deletes its copy with the control-plane claim, and never touches a cell’s own claim of that name', async () => {
    const { cells, controlPlane, reconcile, makeClaim, copyIn, nameFrom } = setup();
    makeClaim();
    cells.get('a')!.put(CLAIM, { metadata: { name: 'data', namespace: 'shop' }, spec: {} } as KubeObject);
    nameFrom('a', 'b');
    await reconcile();
    // a holds a claim of its own (a StatefulSet's, say): the copy goes to the next cell naming it.
    expect(copyIn('a')?.metadata.labels).toBeUndefined();
    expect(copyIn('b')?.metadata.labels?.[FOLLOWER_LABEL]).toBe('control-plane');
    controlPlane.objects.delete(CLAIM);
    await reconcile();
    expect(copyIn('b')).toBeUndefined();
    expect(copyIn('a')).toBeDefined();
  });

  it('decides nothing while a live cell is not engaged, and leaves a Down cell’s copy out', async () => {
    const unengaged = setup({ unengaged: 'c' });
    unengaged.makeClaim();
    unengaged.nameFrom('a');
    expect(await unengaged.reconcile()).toEqual({ requeueAfterMs: 5000 });
    expect(unengaged.copyIn('a')).toBeUndefined();

    const down = setup({ down: 'b' });
    down.makeClaim();
    down.nameFrom('b', 'c');
    await down.reconcile();
    expect([down.copyIn('b'), down.copyIn('c')?.metadata.name]).toEqual([undefined, 'data']);
  });

  it('makes a claim made again wait for its deleted copy to go, rather than take over the old volume', async () => {
    const { cells, reconcile, makeClaim, copyIn, nameFrom } = setup();
    makeClaim();
    nameFrom('b');
    await reconcile();
    const copy = copyIn('b')!;
    cells
      .get('b')!
      .put(CLAIM, { ...copy, metadata: { ...copy.metadata, deletionTimestamp: '2026-11-27T12:00:00Z' } });
    expect(await reconcile()).toEqual({ requeueAfterMs: 5000 });
    expect(copyIn('a')).toBeUndefined();
    expect(copyIn('c')).toBeUndefined();
  });
});
