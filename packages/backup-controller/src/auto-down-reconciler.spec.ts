import { CellSetReader } from '@cellfed/controller-kit';
import { FakeCell, FakeClock, memoryLogger } from '@cellfed/controller-kit/testing';
import { type KubeObject } from '@cellfed/federation';

import { AutoDownReconciler, UnhealthySince } from './auto-down-reconciler.ts';

const CELLSET_PATH = '/apis/cells.cellfed.io/v1alpha1/cellsets/default';

function setUp(states: Record<string, string>) {
  const controlPlane = new FakeCell('control-plane');
  controlPlane.put(CELLSET_PATH, {
    apiVersion: 'cells.cellfed.io/v1alpha1',
    kind: 'CellSet',
    metadata: { name: 'default', generation: 1 },
    spec: {
      cells: Object.entries(states).map(([id, state]) => ({ id, state, kubeconfigSecretRef: { name: id } })),
    },
  } as KubeObject);
  const clock = new FakeClock();
  const unhealthy = new UnhealthySince();
  const events: string[] = [];
  const reader = new CellSetReader();
  const reconciler = new AutoDownReconciler({
    afterMs: 60_000,
    unhealthySince: (cell) => unhealthy.of(cell),
    cellSet: () => reader.read(controlPlane.get(CELLSET_PATH)),
    controlPlane,
    record: async (_type, reason) => void events.push(reason),
    clock,
  });
  const reconcile = (cell: string) =>
    reconciler.reconcile({
      key: { cell },
      lane: 'high',
      signal: new AbortController().signal,
      log: memoryLogger().logger,
    });
  const stateOf = (cell: string) =>
    (controlPlane.get(CELLSET_PATH)!.spec as { cells: { id: string; state: string }[] }).cells.find(
      (one) => one.id === cell,
    )?.state;
  return { clock, unhealthy, events, reconcile, stateOf };
}

describe('AutoDownReconciler', () => {
  it('marks a cell Down only once it has been unhealthy for the whole period without a break', async () => {
    const t = setUp({ a: 'Normal', b: 'Normal' });
    t.unhealthy.changed('b', 'Unhealthy', t.clock.now());
    await t.clock.advance(30_000);
    expect(await t.reconcile('b')).toEqual({ requeueAfterMs: 30_000 });
    // It recovers, then fails again: the period starts over.
    t.unhealthy.changed('b', 'Healthy', t.clock.now());
    t.unhealthy.changed('b', 'Unhealthy', t.clock.now());
    await t.clock.advance(40_000);
    expect(await t.reconcile('b')).toEqual({ requeueAfterMs: 20_000 });
    expect(t.stateOf('b')).toBe('Normal');

    await t.clock.advance(20_000);
    await t.reconcile('b');
    expect(t.stateOf('b')).toBe('Down');
    expect(t.stateOf('a')).toBe('Normal');
    expect(t.events).toEqual(['CellMarkedDown']);
  });

  it('never marks the last Normal cell Down, and says so', async () => {
    const t = setUp({ a: 'Normal', b: 'Joining' });
    t.unhealthy.changed('a', 'Unhealthy', t.clock.now());
    await t.clock.advance(60_000);
    await t.reconcile('a');
    expect(t.stateOf('a')).toBe('Normal');
    expect(t.events).toEqual(['CellNotMarkedDown']);
  });

  it('leaves a healthy cell alone', async () => {
    const t = setUp({ a: 'Normal', b: 'Normal' });
    expect(await t.reconcile('b')).toEqual({});
    expect(t.stateOf('b')).toBe('Normal');
  });
});
