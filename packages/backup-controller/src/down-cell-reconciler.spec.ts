import { FakeCell, memoryLogger, metricValue } from '@cellfed/controller-kit/testing';
import type { CellState } from '@cellfed/hashing';
import { Registry } from 'prom-client';
import { type KubeObject, type CellularObjectRef } from '@cellfed/federation';

import { BackupMetrics } from './backup-metrics.ts';
import { DownCellReconciler } from './down-cell-reconciler.ts';

const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };
const path = (namespace: string, name: string) => `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`;

function setUp(state: CellState, reachable = true) {
  const cell = new FakeCell('c');
  const registry = new Registry();
  const reconciler = new DownCellReconciler({
    stateOf: () => state,
    reachable: () => (reachable ? { client: cell } : undefined),
    objectsIn: () =>
      [...cell.objects.values()].map((object: KubeObject) => ({
        ref: {
          resource: DEPLOYMENTS,
          namespace: object.metadata.namespace!,
          name: object.metadata.name!,
        } as CellularObjectRef,
        metadata: object.metadata,
      })),
    synced: () => true,
    metrics: new BackupMetrics(registry),
  });
  const reconcile = () =>
    reconciler.reconcile({
      key: { cell: 'c' },
      lane: 'high',
      signal: new AbortController().signal,
      log: memoryLogger().logger,
    });
  const put = (namespace: string, name: string) =>
    cell.put(path(namespace, name), { metadata: { name, namespace } });
  return { cell, registry, reconcile, put };
}

describe('DownCellReconciler', () => {
  it('deletes every stale copy of a Down cell that came back, and leaves the cell’s own objects', async () => {
    const t = setUp('Down');
    t.put('shop', 'web');
    t.put('shop', 'api');
    t.put('kube-system', 'coredns');

    expect(await t.reconcile()).toEqual({ requeueAfterMs: expect.any(Number) });

    expect([...t.cell.objects.keys()]).toEqual([path('kube-system', 'coredns')]);
    expect(await metricValue(t.registry, 'cellfed_backup_operations_total', { operation: 'purged' })).toBe(2);
    // Deleted with the uid the cache saw: a copy created since under the same name is not touched.
    expect(t.cell.writes.every((write) => write.method === 'DELETE')).toBe(true);
  });

  it('does nothing to a cell that is not Down', async () => {
    const t = setUp('Joining');
    t.put('shop', 'web');
    expect(await t.reconcile()).toEqual({});
    expect(t.cell.objects.size).toBe(1);
  });

  it('waits while the Down cell is unreachable', async () => {
    const t = setUp('Down', false);
    t.put('shop', 'web');
    expect(await t.reconcile()).toEqual({ requeueAfterMs: expect.any(Number) });
    expect(t.cell.objects.size).toBe(1);
  });
});
