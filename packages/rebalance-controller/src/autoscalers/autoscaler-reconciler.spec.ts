import { FOLLOWER_LABEL, parseCellSetSpec } from '@cellfed/api';
import { FakeCell, fakeCopies, memoryLogger } from '@cellfed/controller-kit/testing';
import { MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import { type KubeObject } from '@cellfed/federation';

import type { HorizontalPodAutoscaler } from './autoscaler-copy.ts';
import { AutoscalerReconciler } from './autoscaler-reconciler.ts';
import { PlanHolder } from '../rebalance-plan.ts';

const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };
const HPA = '/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers/web';
const WEB = '/apis/apps/v1/namespaces/shop/deployments/web';

function setup(options: { sharedAutoscalers?: boolean } = {}) {
  let synced = true;
  const plans = new PlanHolder();
  plans.load(
    parseCellSetSpec({
      cellularResources: [DEPLOYMENTS],
      ...(options.sharedAutoscalers
        ? { sharedResources: [{ group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' }] }
        : {}),
      cells: ['a', 'b'].map((id) => ({ id, state: 'Normal' as const, kubeconfigSecretRef: { name: id } })),
    }),
    1,
  );
  const cells = new Map(['a', 'b'].map((id) => [id, new FakeCell(id)]));
  const controlPlane = new FakeCell('control-plane');
  const reconciler = new AutoscalerReconciler({
    plans,
    controlPlane,
    autoscaler: () => controlPlane.get(HPA) as HorizontalPodAutoscaler | undefined,
    copies: { ...fakeCopies([...cells.values()], DEPLOYMENTS), synced: () => synced },
    cell: (id) => {
      const client = cells.get(id);
      return client && { id, client };
    },
    kinds: {
      resolve: (apiVersion, kind) =>
        Promise.resolve(
          apiVersion === 'apps/v1' && kind === 'Deployment'
            ? { ...DEPLOYMENTS, namespaced: true }
            : undefined,
        ),
    },
  });
  const { logger, lines } = memoryLogger();
  const reconcile = () =>
    reconciler.reconcile({
      key: { namespace: 'shop', name: 'web' },
      lane: 'high',
      signal: new AbortController().signal,
      log: logger,
    });
  const makeAutoscaler = (minReplicas = 3, kind = 'Deployment') =>
    controlPlane.put(HPA, {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', namespace: 'shop', labels: { team: 'shop', 'cellfed.io/other': 'x' } },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind, name: 'web' }, minReplicas, maxReplicas: 5 },
    } as KubeObject);
  const deploymentIn = (cell: string, labels: Record<string, string> = {}) =>
    cells.get(cell)!.put(WEB, { metadata: { name: 'web', namespace: 'shop', labels } } as KubeObject);
  const copyIn = (cell: string) => cells.get(cell)!.get(HPA) as HorizontalPodAutoscaler | undefined;
  /** What the cell's autoscaler does: computes the copy's status. */
  const computeIn = (cell: string, status: Record<string, unknown>) => {
    const copy = copyIn(cell)!;
    cells.get(cell)!.put(HPA, {
      ...copy,
      status: { ...status, observedGeneration: copy.metadata.generation },
    } as KubeObject);
  };
  const shown = () => (controlPlane.get(HPA) as HorizontalPodAutoscaler).status;
  const unsync = () => (synced = false);
  return {
    cells,
    controlPlane,
    reconcile,
    makeAutoscaler,
    deploymentIn,
    copyIn,
    computeIn,
    shown,
    lines,
    unsync,
  };
}

describe('AutoscalerReconciler', () => {
  it('copies the autoscaler into its target’s cell only, with the user’s marks, and shows the copy’s status', async () => {
    const { reconcile, makeAutoscaler, deploymentIn, copyIn, computeIn, shown } = setup();
    makeAutoscaler();
    deploymentIn('b');
    await reconcile();
    expect(copyIn('a')).toBeUndefined();
    const copy = copyIn('b')!;
    expect(copy.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 3,
      maxReplicas: 5,
    });
    expect(copy.metadata.labels).toEqual({ team: 'shop', [FOLLOWER_LABEL]: 'control-plane' });
    expect(shown()).toBeUndefined(); // not computed in the cell yet

    computeIn('b', { currentReplicas: 1, desiredReplicas: 3 });
    await reconcile();
    expect(shown()).toEqual({ currentReplicas: 1, desiredReplicas: 3, observedGeneration: 1 });
  });

  it('moves the copy with its target, never to a move’s fenced old copy, and shows no stale status', async () => {
    const { cells, controlPlane, reconcile, makeAutoscaler, deploymentIn, copyIn, computeIn, shown } =
      setup();
    makeAutoscaler();
    deploymentIn('a');
    await reconcile();
    computeIn('a', { currentReplicas: 3, desiredReplicas: 3 });
    await reconcile();
    // The move: a's copy fenced, b's the object now.
    deploymentIn('a', { [REBALANCE_STATUS_LABEL]: MIGRATING });
    deploymentIn('b');
    await reconcile();
    expect(copyIn('a')).toBeUndefined();
    expect(copyIn('b')?.metadata.labels?.[FOLLOWER_LABEL]).toBe('control-plane');
    // The spec changes: b's copy is applied again, and its status from before is not shown as current.
    const before = controlPlane.get(HPA) as HorizontalPodAutoscaler;
    controlPlane.put(HPA, { ...before, spec: { ...before.spec, minReplicas: 4 } });
    await reconcile();
    expect(copyIn('b')?.spec?.minReplicas).toBe(4);
    computeIn('b', { currentReplicas: 3, desiredReplicas: 3 });
    const copy = copyIn('b')!;
    cells.get('b')!.put(HPA, { ...copy, status: { ...copy.status, observedGeneration: 1 } } as KubeObject);
    await reconcile();
    expect(shown()).toEqual({ currentReplicas: 3, desiredReplicas: 3, observedGeneration: 1 });
    computeIn('b', { currentReplicas: 3, desiredReplicas: 4 });
    await reconcile();
    expect(shown()).toEqual({ currentReplicas: 3, desiredReplicas: 4, observedGeneration: 2 });
  });

  it('removes its copies when the autoscaler goes, and never touches a cell’s own autoscaler of that name', async () => {
    const { cells, controlPlane, reconcile, makeAutoscaler, deploymentIn, copyIn, lines } = setup();
    makeAutoscaler();
    deploymentIn('a');
    cells
      .get('a')!
      .put(HPA, { metadata: { name: 'web', namespace: 'shop' }, spec: { minReplicas: 9 } } as KubeObject);
    await reconcile();
    expect(copyIn('a')?.spec).toEqual({ minReplicas: 9 });
    expect(lines.some((line) => line.msg === 'the cell has an autoscaler of that name')).toBe(true);

    cells.get('a')!.objects.delete(HPA);
    await reconcile();
    expect(copyIn('a')).toBeDefined();
    controlPlane.objects.delete(HPA);
    await reconcile();
    expect(copyIn('a')).toBeUndefined();
  });

  it('places nothing for a target that is not cellular or not there, or when the CellSet shares autoscalers', async () => {
    const notCellular = setup();
    notCellular.makeAutoscaler(3, 'ReplicationController');
    notCellular.deploymentIn('a');
    await notCellular.reconcile();
    expect([notCellular.copyIn('a'), notCellular.copyIn('b')]).toEqual([undefined, undefined]);

    const missing = setup();
    missing.makeAutoscaler();
    await missing.reconcile();
    expect([missing.copyIn('a'), missing.copyIn('b')]).toEqual([undefined, undefined]);

    const shared = setup({ sharedAutoscalers: true });
    shared.makeAutoscaler();
    shared.deploymentIn('a');
    await shared.reconcile();
    expect(shared.copyIn('a')).toBeUndefined();
  });

  it('decides nothing until the cells’ caches are listed, and keeps a copy whose target went', async () => {
    const { cells, reconcile, makeAutoscaler, deploymentIn, copyIn, unsync } = setup();
    makeAutoscaler();
    deploymentIn('a');
    await reconcile();
    expect(copyIn('a')).toBeDefined();
    // The target is gone: one apiserver keeps the autoscaler, and its copy keeps its state where it was.
    cells.get('a')!.objects.delete(WEB);
    await reconcile();
    expect(copyIn('a')).toBeDefined();
    // A cache being listed again (a new leader, a cell engaged) shows no target anywhere yet.
    deploymentIn('a');
    unsync();
    expect(await reconcile()).toEqual({ requeueAfterMs: 1000 });
    expect(copyIn('a')).toBeDefined();
  });

  it('leaves the control plane’s own autoscalers alone', async () => {
    const { controlPlane, reconcile, deploymentIn, copyIn } = setup();
    controlPlane.put(HPA, {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', namespace: 'shop', labels: { 'app.kubernetes.io/part-of': 'cellfed' } },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 2 },
    } as KubeObject);
    deploymentIn('a');
    await reconcile();
    expect(copyIn('a')).toBeUndefined();
  });
});
