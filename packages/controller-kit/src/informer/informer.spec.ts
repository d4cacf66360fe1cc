import { Registry } from 'prom-client';
import { type KubeObject } from '@cellfed/federation';

import { ApiError } from '../kube/api-error.ts';
import { FakeClock, flushPromises } from '../testing/fake-clock.ts';
import { FakeListWatch, goneError } from '../testing/fake-list-watch.ts';
import { memoryLogger } from '../testing/memory-logger.ts';
import { metricValue } from '../testing/metric-value.ts';
import { Informer, type InformerEvent, type InformerOptions } from './informer.ts';

function setup(options: Partial<InformerOptions<KubeObject>> = {}) {
  const clock = new FakeClock();
  const source = new FakeListWatch();
  const registry = new Registry();
  const { logger, lines } = memoryLogger();
  const informer = new Informer({
    cell: 'cell-a',
    resource: 'v1/configmaps',
    listWatch: source,
    logger,
    registry,
    clock,
    random: () => 0,
    backoff: { initialMs: 1000, maxMs: 8000 },
    watchdogMs: 60_000,
    ...options,
  });
  const events: InformerEvent[] = [];
  informer.addHandler((event) => events.push(event));
  const stop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  /** Starts the informer; tests seed the fake apiserver first, as if the objects existed before. */
  const start = () => {
    running = informer.run(stop.signal);
  };
  const metric = (name: string, labels: Record<string, string> = {}) => metricValue(registry, name, labels);
  const shutdown = async () => {
    stop.abort();
    await running;
  };
  return { clock, source, informer, events, lines, metric, shutdown, start };
}

describe('Informer', () => {
  it('lists, reports the initial objects in the low lane, then follows the watch in the high lane', async () => {
    const { source, informer, events, shutdown, start } = setup();
    source.put('ns', 'a');
    source.put('ns', 'b');
    start();
    expect(await informer.waitForSync()).toBe(true);
    await flushPromises();
    expect(events).toEqual([
      { type: 'added', key: 'cell-a/ns/a', lane: 'low' },
      { type: 'added', key: 'cell-a/ns/b', lane: 'low' },
    ]);
    events.length = 0;
    source.put('ns', 'c');
    source.put('ns', 'a', { data: { x: '1' } });
    source.remove('ns', 'b');
    await flushPromises();
    expect(events).toEqual([
      { type: 'added', key: 'cell-a/ns/c', lane: 'high' },
      { type: 'modified', key: 'cell-a/ns/a', lane: 'high' },
      { type: 'deleted', key: 'cell-a/ns/b', lane: 'high' },
    ]);
    expect(informer.keys().sort()).toEqual(['cell-a/ns/a', 'cell-a/ns/c']);
    expect([informer.has('cell-a/ns/c'), informer.has('cell-a/ns/b')]).toEqual([true, false]);
    expect(informer.get('cell-a/ns/a')?.data).toEqual({ x: '1' });
    await shutdown();
  });

  it('lists in pages and watches from the list resourceVersion', async () => {
    const { source, informer, shutdown, start } = setup({ pageSize: 500 });
    for (let i = 0; i < 1200; i++) source.putQuietly('ns', `o-${i}`);
    start();
    await informer.waitForSync();
    await flushPromises();
    expect(source.listCalls).toEqual([{}, { continue: '500' }, { continue: '1000' }]);
    expect(informer.size).toBe(1200);
    expect(source.watchCalls[0]!.resourceVersion).toBe('1201');
    await shutdown();
  });

  it('hands out clones: a caller cannot change the cache', async () => {
    const { source, informer, shutdown, start } = setup();
    source.put('ns', 'a', { data: { x: '1' } });
    start();
    await informer.waitForSync();
    const copy = informer.get('cell-a/ns/a')!;
    (copy.data as Record<string, string>).x = 'changed';
    informer.list()[0]!.metadata.name = 'changed';
    expect(informer.get('cell-a/ns/a')?.data).toEqual({ x: '1' });
    expect(informer.get('cell-a/ns/a')?.metadata.name).toBe('a');
    await shutdown();
  });

  it("hands out copies of one object's labels too", async () => {
    const { source, informer, shutdown, start } = setup();
    source.put('ns', 'a', { metadata: { labels: { team: 'x' } } });
    start();
    await informer.waitForSync();
    informer.labels('cell-a/ns/a')!['team'] = 'changed';
    expect(informer.labels('cell-a/ns/a')).toEqual({ team: 'x' });
    expect(informer.labels('cell-a/ns/missing')).toBeUndefined();
    await shutdown();
  });

  it('visits every cached object without copying it', async () => {
    const { source, informer, shutdown, start } = setup();
    source.put('ns', 'a', { metadata: { labels: { team: 'x' } } });
    source.put('ns', 'b', { metadata: {} });
    start();
    await informer.waitForSync();
    const seen: string[] = [];
    informer.each((key, object) => seen.push(`${key}:${object.metadata.labels?.['team'] ?? '-'}`));
    expect(seen.sort()).toEqual(['cell-a/ns/a:x', 'cell-a/ns/b:-']);
    await shutdown();
  });

  it('peeks at a cached object without copying it; a later change replaces it rather than editing it', async () => {
    const { source, informer, shutdown, start } = setup();
    source.put('ns', 'a', { data: { x: '1' } });
    start();
    await informer.waitForSync();
    const seen = informer.peek('cell-a/ns/a')!;
    expect(informer.peek('cell-a/ns/a')).toBe(seen);
    source.put('ns', 'a', { data: { x: '2' } });
    await flushPromises();
    expect(informer.peek('cell-a/ns/a')?.data).toEqual({ x: '2' });
    expect(seen.data).toEqual({ x: '1' });
    expect(informer.peek('cell-a/ns/missing')).toBeUndefined();
    await shutdown();
  });

  it('drops managedFields unless told otherwise', async () => {
    const { source, informer, shutdown, start } = setup();
    source.put('ns', 'a', { metadata: { managedFields: [{ manager: 'kubectl' }], labels: { app: 'x' } } });
    start();
    await informer.waitForSync();
    expect(informer.get('cell-a/ns/a')?.metadata).not.toHaveProperty('managedFields');
    expect(informer.get('cell-a/ns/a')?.metadata.labels).toEqual({ app: 'x' });
    await shutdown();
  });

  it('resumes the watch from the last resourceVersion after a broken connection, with backoff', async () => {
    const { source, informer, clock, events, metric, shutdown, start } = setup();
    source.put('ns', 'a');
    start();
    await informer.waitForSync();
    await flushPromises();
    source.put('ns', 'b');
    await flushPromises();
    source.breakWatches();
    source.watchFailures.push(new Error('connect ECONNREFUSED'));
    await flushPromises();
    expect(source.watchCalls).toHaveLength(1);
    await clock.advance(999);
    expect(source.watchCalls).toHaveLength(1);
    await clock.advance(1);
    // That retry failed to connect; the next one waits twice as long.
    expect(source.watchCalls).toHaveLength(2);
    await clock.advance(1999);
    expect(source.watchCalls).toHaveLength(2);
    await clock.advance(1);
    expect(source.watchCalls).toHaveLength(3);
    expect(source.watchCalls.slice(1).map((call) => call.resourceVersion)).toEqual(['3', '3']);
    expect(source.listCalls).toHaveLength(1);
    source.put('ns', 'c');
    await flushPromises();
    expect(events.at(-1)).toEqual({ type: 'added', key: 'cell-a/ns/c', lane: 'high' });
    expect(await metric('cellfed_informer_watch_errors_total')).toBe(2);
    await shutdown();
  });

  it('rewatches without relisting when the server ends a watch cleanly', async () => {
    const { source, informer, shutdown, start } = setup();
    start();
    await informer.waitForSync();
    await flushPromises();
    source.bookmark();
    await flushPromises();
    source.endWatches();
    await flushPromises();
    expect(source.listCalls).toHaveLength(1);
    expect(source.watchCalls.map((call) => call.resourceVersion)).toEqual(['1', '2']);
    await shutdown();
  });

  it('relists on a 410 in the watch stream and reports only what changed meanwhile', async () => {
    const { source, informer, events, metric, shutdown, start } = setup();
    source.put('ns', 'stays');
    source.put('ns', 'changes');
    source.put('ns', 'goes');
    start();
    await informer.waitForSync();
    await flushPromises();
    events.length = 0;
    source.putQuietly('ns', 'changes');
    source.removeQuietly('ns', 'goes');
    source.putQuietly('ns', 'new');
    source.sendStatus({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    await flushPromises();
    expect(source.listCalls).toHaveLength(2);
    expect(events).toEqual([
      { type: 'modified', key: 'cell-a/ns/changes', lane: 'high' },
      { type: 'added', key: 'cell-a/ns/new', lane: 'high' },
      { type: 'deleted', key: 'cell-a/ns/goes', lane: 'high' },
    ]);
    expect(await metric('cellfed_informer_relists_total', { reason: 'expired' })).toBe(1);
    await shutdown();
  });

  it('relists when the history it would resume from is compacted (410 on the watch request)', async () => {
    const { source, informer, events, clock, shutdown, start } = setup();
    start();
    await informer.waitForSync();
    await flushPromises();
    source.putQuietly('ns', 'missed');
    source.compact();
    source.breakWatches();
    await clock.advance(1000);
    expect(source.listCalls).toHaveLength(2);
    expect(events).toEqual([{ type: 'added', key: 'cell-a/ns/missed', lane: 'high' }]);
    expect(source.openWatches).toBe(1);
    await shutdown();
  });

  it('relists when a watch stays silent past the watchdog', async () => {
    const { source, informer, clock, metric, shutdown, start } = setup({ watchdogMs: 60_000 });
    start();
    await informer.waitForSync();
    await clock.advance(59_000);
    source.bookmark();
    await clock.advance(59_000);
    expect(source.listCalls).toHaveLength(1);
    await clock.advance(1000);
    expect(source.listCalls).toHaveLength(2);
    expect(await metric('cellfed_informer_relists_total', { reason: 'watchdog' })).toBe(1);
    await shutdown();
  });

  it('keeps retrying a failing list with growing backoff until it works', async () => {
    const { source, informer, clock, shutdown, start } = setup();
    source.listFailures.push(
      new ApiError(503, { reason: 'ServiceUnavailable' }, 'list'),
      new Error('ECONNREFUSED'),
    );
    source.put('ns', 'a');
    start();
    await flushPromises();
    expect(informer.hasSynced()).toBe(false);
    await clock.advance(1000);
    expect(source.listCalls).toHaveLength(2);
    await clock.advance(1999);
    expect(informer.hasSynced()).toBe(false);
    await clock.advance(1);
    expect(informer.hasSynced()).toBe(true);
    expect(informer.keys()).toEqual(['cell-a/ns/a']);
    await shutdown();
  });

  it('isolates a throwing handler', async () => {
    const { source, informer, lines, events, shutdown, start } = setup();
    informer.addHandler(() => {
      throw new Error('handler bug');
    });
    start();
    await informer.waitForSync();
    await flushPromises();
    source.put('ns', 'a');
    source.put('ns', 'b');
    await flushPromises();
    expect(events.map((event) => event.key)).toEqual(['cell-a/ns/a', 'cell-a/ns/b']);
    expect(
      lines.filter((line) => line.msg === 'event handler threw; event dropped for this handler'),
    ).toHaveLength(2);
    expect(
      lines.find((line) => line.msg === 'event handler threw; event dropped for this handler'),
    ).toMatchObject({
      cell: 'cell-a',
      key: 'cell-a/ns/a',
    });
    await shutdown();
  });

  it('replays the cache to a handler added after sync', async () => {
    const { source, informer, shutdown, start } = setup();
    source.put('ns', 'a');
    start();
    await informer.waitForSync();
    const late: InformerEvent[] = [];
    informer.addHandler((event) => late.push(event));
    expect(late).toEqual([{ type: 'added', key: 'cell-a/ns/a', lane: 'low' }]);
    await shutdown();
  });

  it('emits periodic resyncs in the low lane', async () => {
    const { source, informer, clock, events, shutdown, start } = setup({
      resyncPeriodMs: 10_000,
      watchdogMs: 1e9,
    });
    source.put('ns', 'a');
    start();
    await informer.waitForSync();
    events.length = 0;
    await clock.advance(10_000);
    expect(events).toEqual([{ type: 'resync', key: 'cell-a/ns/a', lane: 'low' }]);
    await shutdown();
  });

  it('stops when asked, closing its watch and removing its metric series', async () => {
    const { source, informer, metric, shutdown, start } = setup();
    start();
    await informer.waitForSync();
    await flushPromises();
    expect(source.openWatches).toBe(1);
    expect(await metric('cellfed_informer_synced', { cell: 'cell-a' })).toBe(1);
    await shutdown();
    expect(source.openWatches).toBe(0);
    expect(await metric('cellfed_informer_synced', { cell: 'cell-a' })).toBeUndefined();
  });

  it('waitForSync resolves false when aborted first', async () => {
    const { source, informer, shutdown, start } = setup();
    source.listFailures.push(goneError(), new Error('down'));
    const abort = new AbortController();
    start();
    const waiting = informer.waitForSync(abort.signal);
    abort.abort();
    expect(await waiting).toBe(false);
    await shutdown();
  });
});

describe('Informer over a metadata-only source', () => {
  it('keeps compact metadata by default', async () => {
    const source = Object.assign(new FakeListWatch(), { metadataOnly: true });
    source.put('ns', 'a', {
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { labels: { app: 'x' }, managedFields: [{}] },
    });
    const informer = new Informer({
      cell: 'c',
      resource: 'v1/configmaps',
      listWatch: source,
      logger: memoryLogger().logger,
    });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    await informer.waitForSync();
    expect(informer.get('c/ns/a')).toEqual({
      metadata: { namespace: 'ns', name: 'a', resourceVersion: '2', labels: { app: 'x' } },
    });
    stop.abort();
    await running;
  });
});
