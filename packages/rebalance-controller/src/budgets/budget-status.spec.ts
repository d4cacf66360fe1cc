import {
  federationBudgetStatus,
  sameBudgetStatus,
  type BudgetStatus,
  type PodDisruptionBudget,
} from './budget-status.ts';

const NOW = new Date('2026-11-27T12:00:00.123Z');

function budget(spec: PodDisruptionBudget['spec'], status?: BudgetStatus): PodDisruptionBudget {
  return {
    metadata: { name: 'guarded', namespace: 'shop', generation: 3 },
    spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
    ...(status ? { status } : {}),
  };
}

/** A cell's copy as its disruption controller counts it over its own pods. */
function counted(
  expectedPods: number,
  currentHealthy: number,
  extra: Partial<BudgetStatus> = {},
): BudgetStatus {
  return {
    expectedPods,
    currentHealthy,
    desiredHealthy: 0,
    disruptionsAllowed: 0,
    observedGeneration: 1,
    ...extra,
  };
}

describe('federationBudgetStatus', () => {
  it('sums the cells’ pods and computes what one apiserver would over all of them', () => {
    // minAvailable 2 over 3 healthy pods, all in one cell: the other cell has none.
    const status = federationBudgetStatus(budget({ minAvailable: 2 }), [counted(3, 3), counted(0, 0)], NOW);
    expect(status).toEqual({
      observedGeneration: 3,
      expectedPods: 3,
      currentHealthy: 3,
      desiredHealthy: 2,
      disruptionsAllowed: 1,
      conditions: [
        {
          type: 'DisruptionAllowed',
          status: 'True',
          reason: 'SufficientPods',
          message: '',
          observedGeneration: 3,
          lastTransitionTime: '2026-11-27T12:00:00Z',
        },
      ],
    });
  });

  it.each([
    [{ minAvailable: '50%' }, 5, 3], // ceil(2.5)
    [{ maxUnavailable: 1 }, 5, 4],
    [{ maxUnavailable: '30%' }, 5, 3], // 5 - ceil(1.5)
    [{ maxUnavailable: 9 }, 5, 0], // never below 0
    [{}, 5, 0],
  ] as const)('derives desiredHealthy from %j over %i pods as kube does: %i', (spec, pods, desired) => {
    const status = federationBudgetStatus(budget(spec), [counted(pods - 2, pods - 2), counted(2, 2)], NOW);
    expect(status.expectedPods).toBe(pods);
    expect(status.desiredHealthy).toBe(desired);
    expect(status.disruptionsAllowed).toBe(pods - desired);
  });

  it('allows nothing while too few are healthy, or none are expected', () => {
    const short = federationBudgetStatus(budget({ minAvailable: 2 }), [counted(2, 1), counted(0, 0)], NOW);
    expect(short).toMatchObject({ disruptionsAllowed: 0, currentHealthy: 1 });
    expect(short.conditions?.[0]).toMatchObject({ status: 'False', reason: 'InsufficientPods' });
    const none = federationBudgetStatus(budget({ maxUnavailable: 1 }), [counted(0, 0), counted(0, 0)], NOW);
    expect(none.disruptionsAllowed).toBe(0);
  });

  it('fails safe when a cell could not count, with that cell’s reason', () => {
    const failed = counted(2, 2, {
      conditions: [
        { type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message: 'found no controllers' },
      ],
    });
    const status = federationBudgetStatus(budget({ minAvailable: 1 }), [counted(3, 3), failed], NOW);
    expect(status.disruptionsAllowed).toBe(0);
    expect(status.conditions?.[0]).toMatchObject({
      status: 'False',
      reason: 'SyncFailed',
      message: 'found no controllers',
    });
  });

  it('joins the pods being disrupted in every cell, and keeps other conditions and an unchanged transition time', () => {
    const before: BudgetStatus = {
      ...counted(3, 3),
      conditions: [
        { type: 'Other', status: 'True', reason: 'Mine', message: 'kept' },
        {
          type: 'DisruptionAllowed',
          status: 'True',
          reason: 'SufficientPods',
          message: '',
          lastTransitionTime: '2026-11-01T00:00:00Z',
        },
      ],
    };
    const status = federationBudgetStatus(
      budget({ minAvailable: 1 }, before),
      [
        counted(2, 2, { disruptedPods: { 'web-a': '2026-11-27T11:59:59Z' } }),
        counted(1, 1, { disruptedPods: { 'web-b': '2026-11-27T11:59:58Z' } }),
      ],
      NOW,
    );
    expect(status.disruptedPods).toEqual({
      'web-a': '2026-11-27T11:59:59Z',
      'web-b': '2026-11-27T11:59:58Z',
    });
    expect(status.conditions).toEqual([
      before.conditions![0],
      expect.objectContaining({ type: 'DisruptionAllowed', lastTransitionTime: '2026-11-01T00:00:00Z' }),
    ]);
  });
});

describe('sameBudgetStatus', () => {
  it('ignores transition times and map order, and nothing else', () => {
    const status = federationBudgetStatus(budget({ minAvailable: 1 }), [counted(2, 2)], NOW);
    const later = federationBudgetStatus(
      budget({ minAvailable: 1 }),
      [counted(2, 2)],
      new Date('2026-11-28T00:00:00Z'),
    );
    expect(sameBudgetStatus(status, later)).toBe(true);
    expect(sameBudgetStatus(status, { ...later, currentHealthy: 1 })).toBe(false);
    expect(sameBudgetStatus(undefined, status)).toBe(false);
  });
});
