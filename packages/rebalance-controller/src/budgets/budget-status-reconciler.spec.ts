import { MIRROR_HASH_ANNOTATION, parseCellSetSpec } from '@cellfed/api';
import { FakeCell, FakeClock, memoryLogger } from '@cellfed/controller-kit/testing';
import { type KubeObject } from '@cellfed/federation';

import { BudgetStatusReconciler } from './budget-status-reconciler.ts';
import type { PodDisruptionBudget } from './budget-status.ts';
import { PlanHolder } from '../rebalance-plan.ts';
import { mirroredCopy } from '../mirror/shared-objects.ts';

const PDB = '/apis/policy/v1/namespaces/shop/poddisruptionbudgets/guarded';

function setup(options: { down?: string; unengaged?: string } = {}) {
  const plans = new PlanHolder();
  plans.load(
    parseCellSetSpec({
      cells: ['a', 'b'].map((id) => ({
        id,
        state: id === options.down ? ('Down' as const) : ('Normal' as const),
        kubeconfigSecretRef: { name: id },
      })),
    }),
    1,
  );
  const cells = new Map(['a', 'b'].map((id) => [id, new FakeCell(id)]));
  const controlPlane = new FakeCell('control-plane');
  const reconciler = new BudgetStatusReconciler({
    plans,
    controlPlane,
    budget: () => controlPlane.get(PDB) as PodDisruptionBudget | undefined,
    cell: (id) => {
      const client = cells.get(id);
      return client && id !== options.unengaged ? { id, client } : undefined;
    },
    clock: new FakeClock(Date.parse('2026-11-27T12:00:00Z')),
  });
  const { logger } = memoryLogger();
  const reconcile = () =>
    reconciler.reconcile({
      key: { namespace: 'shop', name: 'guarded' },
      lane: 'high',
      signal: new AbortController().signal,
      log: logger,
    });
  const makeBudget = (minAvailable: number) =>
    controlPlane.put(PDB, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'guarded', namespace: 'shop' },
      spec: { minAvailable, selector: { matchLabels: { app: 'web' } } },
    } as KubeObject);
  /** The mirror's copy in a cell, counted there by its disruption controller over `pods` healthy pods. */
  const countIn = (cell: string, pods: number, options: { stale?: boolean } = {}) => {
    const source = controlPlane.get(PDB) as PodDisruptionBudget;
    const copy = mirroredCopy(source);
    if (options.stale)
      copy.metadata.annotations = { ...copy.metadata.annotations, [MIRROR_HASH_ANNOTATION]: 'old' };
    const stored = cells.get(cell)!.put(PDB, copy);
    cells.get(cell)!.put(PDB, {
      ...stored,
      status: {
        observedGeneration: stored.metadata.generation,
        expectedPods: pods,
        currentHealthy: pods,
        desiredHealthy: 2,
        disruptionsAllowed: Math.max(0, pods - 2),
      },
    } as KubeObject);
  };
  const status = () => (controlPlane.get(PDB) as PodDisruptionBudget).status;
  return { cells, controlPlane, reconcile, makeBudget, countIn, status };
}

describe('BudgetStatusReconciler', () => {
  it('writes the budget’s status summed from every live cell’s copy', async () => {
    const { reconcile, makeBudget, countIn, status } = setup();
    makeBudget(2);
    countIn('a', 3);
    countIn('b', 0);
    expect(await reconcile()).toEqual({});
    expect(status()).toMatchObject({
      expectedPods: 3,
      currentHealthy: 3,
      desiredHealthy: 2,
      disruptionsAllowed: 1,
    });
  });

  it('waits for every cell’s copy of this version of the budget, counted since', async () => {
    const { cells, reconcile, makeBudget, countIn, status } = setup();
    makeBudget(2);
    countIn('a', 3);
    // b has no copy yet, then a copy of an older version, then one not counted yet.
    await reconcile();
    expect(status()).toBeUndefined();
    countIn('b', 0, { stale: true });
    await reconcile();
    expect(status()).toBeUndefined();
    countIn('b', 0);
    const copy = cells.get('b')!.get(PDB)!;
    cells.get('b')!.put(PDB, {
      ...copy,
      metadata: { ...copy.metadata },
      spec: { minAvailable: 2, selector: {} },
    } as KubeObject);
    await reconcile();
    expect(status()).toBeUndefined();
  });

  it('leaves a Down cell out, and waits for a live cell that is not engaged', async () => {
    const down = setup({ down: 'b' });
    down.makeBudget(2);
    down.countIn('a', 2);
    await down.reconcile();
    expect(down.status()).toMatchObject({ expectedPods: 2, disruptionsAllowed: 0 });

    const unengaged = setup({ unengaged: 'b' });
    unengaged.makeBudget(2);
    unengaged.countIn('a', 2);
    expect(await unengaged.reconcile()).toEqual({ requeueAfterMs: 5000 });
    expect(unengaged.status()).toBeUndefined();
  });

  it('writes nothing when the status is what it shows already', async () => {
    const { controlPlane, reconcile, makeBudget, countIn } = setup();
    makeBudget(2);
    countIn('a', 3);
    countIn('b', 0);
    await reconcile();
    const written = controlPlane.get(PDB)!.metadata.resourceVersion;
    await reconcile();
    expect(controlPlane.get(PDB)!.metadata.resourceVersion).toBe(written);
  });

  it('fails safe at once when a cell cannot count, although that cell’s count is of an older generation', async () => {
    const { cells, reconcile, makeBudget, countIn, status } = setup();
    makeBudget(2);
    countIn('a', 3);
    countIn('b', 0);
    await reconcile();
    expect(status()?.disruptionsAllowed).toBe(1);
    // kube's failSafe: nothing allowed, SyncFailed, observedGeneration left as it was.
    const copy = cells.get('a')!.get(PDB)!;
    cells.get('a')!.put(PDB, {
      ...copy,
      status: {
        ...(copy as PodDisruptionBudget).status,
        observedGeneration: 0,
        disruptionsAllowed: 0,
        conditions: [
          { type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message: 'no scale' },
        ],
      },
    } as KubeObject);
    await reconcile();
    expect(status()).toMatchObject({
      disruptionsAllowed: 0,
      conditions: [expect.objectContaining({ reason: 'SyncFailed', message: 'no scale' })],
    });
  });
});
