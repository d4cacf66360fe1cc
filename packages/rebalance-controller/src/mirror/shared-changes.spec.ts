import type { GroupVersionResource } from '@cellfed/api';
import { flushPromises, FakeListWatch, memoryLogger } from '@cellfed/controller-kit/testing';
import type { KubeClient } from '@cellfed/controller-kit';
import { SECRETS } from '@cellfed/federation';

import { SharedChanges } from './shared-changes.ts';

import { SERVICE_ACCOUNTS } from './shared-objects.ts';

async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 100 && !condition(); turn++) await flushPromises();
  expect(condition()).toBe(true);
}

describe('SharedChanges', () => {
  function setUp() {
    const sources = new Map<string, FakeListWatch>();
    let changes = 0;
    const listed: string[] = [];
    const whole: string[] = [];
    const watcher = new SharedChanges({
      controlPlane: {} as KubeClient,
      logger: memoryLogger().logger,
      keepWhole: (resource) => resource.resource === 'secrets',
      listWatch: (resource: GroupVersionResource, keptWhole) => {
        const source = sources.get(resource.resource) ?? new FakeListWatch();
        sources.set(resource.resource, source);
        if (keptWhole) whole.push(resource.resource);
        return source;
      },
    });
    watcher.addHandler((resource, lane) => {
      if (lane === 'high') changes++;
      else listed.push(resource.resource);
    });
    const abort = new AbortController();
    const running = watcher.run(abort.signal);
    return { sources, watcher, abort, running, changes: () => changes, listed, whole };
  }

  it('tells what the first list finds in the low lane, and keeps whole only the resources asked', async () => {
    const { sources, watcher, abort, running, listed, whole, changes } = setUp();
    const secrets = new FakeListWatch();
    sources.set('secrets', secrets);
    secrets.put('shop', 'limits', { data: { max: '3' } } as never);
    watcher.watch([SERVICE_ACCOUNTS, SECRETS]);
    expect(whole).toEqual(['secrets']);
    await until(() => listed.includes('secrets'));
    expect(changes()).toBe(0);
    expect(watcher.objects(SECRETS)).toEqual([
      expect.objectContaining({ metadata: expect.objectContaining({ name: 'limits' }), data: { max: '3' } }),
    ]);
    // Any version of the resource finds them.
    expect(watcher.objects({ ...SECRETS, version: 'v1beta1' })).toHaveLength(1);
    expect(watcher.synced(SECRETS)).toBe(true);
    const before = changes();
    watcher.watch([SERVICE_ACCOUNTS]);
    expect(watcher.objects(SECRETS)).toEqual([]);
    // Dropped: readers of objects() are told to read again; a resource not watched is complete (empty).
    expect(changes()).toBe(before + 1);
    expect(watcher.synced(SECRETS)).toBe(true);
    abort.abort();
    await running;
  });

  it('is not synced for a watched resource before its first list', () => {
    const watcher = new SharedChanges({
      controlPlane: {} as KubeClient,
      logger: memoryLogger().logger,
      listWatch: () => new FakeListWatch(),
    });
    watcher.watch([SECRETS]);
    // Not running yet (no run()): nothing is listed.
    expect(watcher.synced(SECRETS)).toBe(false);
    expect(watcher.synced(SERVICE_ACCOUNTS)).toBe(true);
  });

  it('starts a pass for a change after the first list, not for what the first list finds', async () => {
    const { sources, watcher, abort, running, changes } = setUp();
    watcher.watch([SERVICE_ACCOUNTS]);
    const accounts = sources.get('serviceaccounts')!;
    accounts.put('shop', 'existing');
    await until(() => accounts.openWatches === 1);
    const before = changes();
    accounts.put('shop', 'builder');
    await until(() => changes() > before);
    abort.abort();
    await running;
    expect(watcher.watched()).toEqual([]);
  });

  it('follows the shared resources: a resource added is watched, one taken away is no longer', async () => {
    const { sources, watcher, abort, running, changes } = setUp();
    watcher.watch([SERVICE_ACCOUNTS]);
    expect(watcher.watched()).toEqual(['v1/serviceaccounts']);
    watcher.watch([SERVICE_ACCOUNTS, SECRETS]);
    expect(watcher.watched()).toEqual(['v1/secrets', 'v1/serviceaccounts']);
    const secrets = sources.get('secrets')!;
    await until(() => secrets.openWatches === 1);
    watcher.watch([SERVICE_ACCOUNTS]);
    expect(watcher.watched()).toEqual(['v1/serviceaccounts']);
    await until(() => secrets.openWatches === 0);
    const before = changes();
    secrets.put('shop', 'db-password');
    await flushPromises();
    expect(changes()).toBe(before);
    abort.abort();
    await running;
  });

  it('waits for run before it watches anything', () => {
    const made: string[] = [];
    const watcher = new SharedChanges({
      controlPlane: {} as KubeClient,
      logger: memoryLogger().logger,
      listWatch: (resource) => {
        made.push(resource.resource);
        return new FakeListWatch();
      },
    });
    watcher.watch([SECRETS]);
    expect(made).toEqual([]);
    expect(watcher.watched()).toEqual([]);
  });
});
