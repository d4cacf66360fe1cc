import type { KubeClient } from '../kube/kube-client.ts';
import { FakeListWatch, flushPromises, memoryLogger } from '../testing/index.ts';
import { ControlPlaneNamespaces, type NamespaceChange } from './control-plane-namespaces.ts';

async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 100 && !condition(); turn++) await flushPromises();
  expect(condition()).toBe(true);
}

describe('ControlPlaneNamespaces', () => {
  it('looks namespaces up by name, tells changes by name, and misses on a name no namespace has', async () => {
    const source = new FakeListWatch();
    source.put('', 'shop', { metadata: { labels: { 'cellfed.io/shard-by': 'namespace' } } } as never);
    const namespaces = new ControlPlaneNamespaces({
      controlPlane: {} as KubeClient,
      logger: memoryLogger().logger,
      listWatch: source,
    });
    const changes: NamespaceChange[] = [];
    namespaces.onChange((change) => changes.push(change));
    const abort = new AbortController();
    const running = namespaces.run(abort.signal);
    await namespaces.waitForSync(abort.signal);

    expect(namespaces.hasSynced()).toBe(true);
    expect(namespaces.labels('shop')).toEqual({ 'cellfed.io/shard-by': 'namespace' });
    expect(namespaces.metadata('shop')?.name).toBe('shop');
    expect(namespaces.labels('other')).toBeUndefined();
    expect(namespaces.labels('')).toBeUndefined();
    expect(namespaces.metadata('a/b')).toBeUndefined();
    expect(changes).toEqual([{ type: 'added', name: 'shop', lane: 'low' }]);

    // A copy: changing what it gave does not change the cache.
    namespaces.labels('shop')!['cellfed.io/shard-by'] = 'name';
    expect(namespaces.labels('shop')).toEqual({ 'cellfed.io/shard-by': 'namespace' });

    await until(() => source.openWatches === 1);
    source.remove('', 'shop');
    await until(() => changes.length === 2);
    expect(changes[1]).toEqual({ type: 'deleted', name: 'shop', lane: 'high' });
    expect(namespaces.list()).toEqual([]);
    abort.abort();
    await running;
  });
});
