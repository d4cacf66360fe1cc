import { finishedCells, progressStatus, setCondition } from './cellset-status.ts';

describe('setCondition', () => {
  it('keeps lastTransitionTime while the status stays, and moves it when the status changes', () => {
    const t0 = Date.UTC(2026, 0, 1);
    const first = setCondition(
      [],
      { type: 'Blocked', status: 'True', reason: 'RoutersBehind', message: 'x' },
      t0,
    );
    const same = setCondition(
      first,
      { type: 'Blocked', status: 'True', reason: 'MirrorPending', message: 'y' },
      t0 + 5000,
    );
    expect(same[0]).toMatchObject({
      reason: 'MirrorPending',
      lastTransitionTime: new Date(t0).toISOString(),
    });
    const flipped = setCondition(
      same,
      { type: 'Blocked', status: 'False', reason: 'NotBlocked', message: '' },
      t0 + 9000,
    );
    expect(flipped[0]!.lastTransitionTime).toBe(new Date(t0 + 9000).toISOString());
    const two = setCondition(flipped, { type: 'A', status: 'True', reason: 'R', message: '' }, t0);
    expect(two.map((condition) => condition.type)).toEqual(['A', 'Blocked']);
  });
});

describe('progressStatus', () => {
  it('gives an ETA only with a rate and something pending', () => {
    const progress = {
      total: 10,
      toMove: 6,
      moved: 2,
      pending: 4,
      inFlight: 1,
      uncommitted: 0,
      cells: [],
      pendingExamples: [],
    };
    expect(progressStatus(progress, 2)).toMatchObject({ ratePerSecond: 2, etaSeconds: 2 });
    expect(progressStatus(progress, undefined)).not.toHaveProperty('etaSeconds');
    expect(progressStatus({ ...progress, pending: 0 }, 2)).not.toHaveProperty('etaSeconds');
  });
});

describe('finishedCells', () => {
  it('makes Joining cells Normal, lets Draining cells go and ends a weight change, keeping every other field', () => {
    const ref = { name: 's' };
    const { cells, removed } = finishedCells([
      { id: 'a', state: 'Normal', weight: 2, previousWeight: 1, kubeconfigSecretRef: ref },
      { id: 'b', state: 'Joining', kubeconfigSecretRef: ref },
      { id: 'c', state: 'Draining', kubeconfigSecretRef: ref },
      { id: 'd', state: 'Down', kubeconfigSecretRef: ref },
    ]);
    expect(cells).toEqual([
      { id: 'a', state: 'Normal', weight: 2, kubeconfigSecretRef: ref },
      { id: 'b', state: 'Normal', kubeconfigSecretRef: ref },
      { id: 'd', state: 'Down', kubeconfigSecretRef: ref },
    ]);
    expect(removed.map((cell) => cell.id)).toEqual(['c']);
  });
});
