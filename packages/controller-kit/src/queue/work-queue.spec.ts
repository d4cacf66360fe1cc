import { Registry } from 'prom-client';

import { FakeClock, flushPromises } from '../testing/fake-clock.ts';
import { metricValue } from '../testing/metric-value.ts';
import { WorkQueue, type QueueItem, type WorkQueueOptions } from './work-queue.ts';

function setup(options: Partial<WorkQueueOptions> = {}) {
  const clock = new FakeClock();
  const registry = new Registry();
  const queue = new WorkQueue({ name: 'test', clock, registry, ...options });
  return { clock, registry, queue };
}

/** Starts a get and reports whether it has resolved yet. */
function pending(queue: WorkQueue) {
  let item: QueueItem | undefined | 'pending' = 'pending';
  void queue.get().then((value) => (item = value));
  return { get: () => item };
}

describe('WorkQueue', () => {
  it('collapses adds of a waiting key into one', async () => {
    const { queue } = setup();
    queue.add('a');
    queue.add('a');
    queue.add('b');
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toEqual({ key: 'a', lane: 'high' });
    expect(await queue.get()).toEqual({ key: 'b', lane: 'high' });
    expect(queue.len()).toBe(0);
  });

  it('never hands one key to two workers: a key added while processed waits for done', async () => {
    const { queue } = setup();
    queue.add('a');
    expect((await queue.get())?.key).toBe('a');
    queue.add('a');
    queue.add('a');
    expect(queue.len()).toBe(0);
    const second = pending(queue);
    await flushPromises();
    expect(second.get()).toBe('pending');
    queue.done('a');
    await flushPromises();
    expect(second.get()).toEqual({ key: 'a', lane: 'high' });
    expect(queue.len()).toBe(0);
  });

  it('does not requeue a key that was not added again while processed', async () => {
    const { queue } = setup();
    queue.add('a');
    await queue.get();
    queue.done('a');
    expect(queue.len()).toBe(0);
    expect(queue.inFlight()).toBe(0);
  });

  it('backs off per key exponentially and forgets on success', async () => {
    const { queue, clock } = setup({ backoff: { baseMs: 10, maxMs: 1000 } });
    const delays: number[] = [];
    for (let failure = 0; failure < 4; failure++) {
      const started = clock.now();
      queue.addRateLimited('a');
      const next = pending(queue);
      while (next.get() === 'pending') await clock.advance(1);
      delays.push(clock.now() - started);
      queue.done('a');
    }
    expect(delays).toEqual([10, 20, 40, 80]);
    expect(queue.numRequeues('a')).toBe(4);
    expect(queue.numRequeues('b')).toBe(0);
    queue.forget('a');
    expect(queue.numRequeues('a')).toBe(0);
  });

  it('keeps the earlier of two delayed adds', async () => {
    const { queue, clock } = setup();
    queue.addAfter('a', 1000);
    queue.addAfter('a', 100);
    queue.addAfter('a', 5000);
    const next = pending(queue);
    await clock.advance(99);
    expect(next.get()).toBe('pending');
    await clock.advance(1);
    expect(next.get()).toEqual({ key: 'a', lane: 'high' });
    queue.done('a');
    await clock.advance(10_000);
    expect(queue.len()).toBe(0);
  });

  it('serves the high lane before the low lane', async () => {
    const { queue } = setup();
    queue.add('resync-1', 'low');
    queue.add('resync-2', 'low');
    queue.add('user-1', 'high');
    expect(queue.laneLength('low')).toBe(2);
    expect(queue.laneLength('high')).toBe(1);
    const order = [];
    for (let i = 0; i < 3; i++) order.push((await queue.get())!.key);
    expect(order).toEqual(['user-1', 'resync-1', 'resync-2']);
  });

  it('moves a waiting low key to the high lane when a user change adds it again', async () => {
    const { queue } = setup();
    queue.add('a', 'low');
    queue.add('b', 'low');
    queue.add('b', 'high');
    queue.add('a', 'low');
    expect(queue.laneLength('high')).toBe(1);
    expect(queue.laneLength('low')).toBe(1);
    expect(await queue.get()).toEqual({ key: 'b', lane: 'high' });
    expect(await queue.get()).toEqual({ key: 'a', lane: 'low' });
    expect(queue.len()).toBe(0);
  });

  it('promotes a key added high while its low run is processed', async () => {
    const { queue } = setup();
    queue.add('a', 'low');
    await queue.get();
    queue.add('a', 'low');
    queue.add('a', 'high');
    queue.done('a');
    expect(await queue.get()).toEqual({ key: 'a', lane: 'high' });
  });

  it('serves a key a client waits on (urgent) before every other lane, old low work included', async () => {
    const { queue, clock } = setup({ lowLane: { qps: 1000, burst: 10, maxWaitMs: 500 } });
    queue.add('resync', 'low');
    for (let i = 0; i < 3; i++) queue.add(`bulk-${i}`, 'high');
    await clock.advance(1000);
    queue.add('bulk-1', 'urgent');
    queue.add('touched', 'urgent');
    expect(queue.laneLength('urgent')).toBe(2);
    expect(queue.laneLength('high')).toBe(2);
    const order: string[] = [];
    for (let item = await queue.get(); item; item = queue.len() > 0 ? await queue.get() : undefined) {
      order.push(`${item.key}:${item.lane}`);
      queue.done(item.key);
    }
    expect(order).toEqual(['bulk-1:urgent', 'touched:urgent', 'resync:low', 'bulk-0:high', 'bulk-2:high']);
  });

  it('never moves a key to a less urgent lane, waiting, delayed or processed', async () => {
    const { queue, clock } = setup();
    queue.add('waiting', 'urgent');
    queue.add('waiting', 'high');
    queue.add('waiting', 'low');
    expect(queue.laneLength('urgent')).toBe(1);
    queue.addAfter('delayed', 100, 'urgent');
    queue.addAfter('delayed', 50, 'low');
    await queue.get();
    queue.done('waiting');
    await clock.advance(50);
    expect(await queue.get()).toEqual({ key: 'delayed', lane: 'urgent' });
    queue.add('delayed', 'urgent');
    queue.add('delayed', 'high');
    queue.done('delayed');
    expect(await queue.get()).toEqual({ key: 'delayed', lane: 'urgent' });
  });

  it('hands out the low lane no faster than its token bucket', async () => {
    const { queue, clock } = setup({ lowLane: { qps: 10, burst: 2 } });
    for (let i = 0; i < 5; i++) queue.add(`scan-${i}`, 'low');
    const times: number[] = [];
    const start = clock.now();
    for (let i = 0; i < 5; i++) {
      const next = pending(queue);
      await flushPromises();
      while (next.get() === 'pending') await clock.advance(10);
      times.push(clock.now() - start);
      queue.done((next.get() as QueueItem).key);
    }
    // Two at once (burst), then one per 100 ms.
    expect(times).toEqual([0, 0, 100, 200, 300]);
  });

  it('ages the low lane so a steady stream of user changes cannot starve it', async () => {
    const { queue, clock } = setup({ lowLane: { qps: 1000, burst: 10, maxWaitMs: 500 } });
    queue.add('resync', 'low');
    const served: string[] = [];
    // A user change arrives every 10 ms and there is always one waiting.
    for (let tick = 0; tick < 100 && !served.includes('resync'); tick++) {
      queue.add(`user-${tick}`, 'high');
      queue.add(`user-${tick}-b`, 'high');
      const item = (await queue.get())!;
      served.push(item.key);
      queue.done(item.key);
      await clock.advance(10);
    }
    const at = served.indexOf('resync');
    expect(at).toBeGreaterThan(0);
    // It went first once it had waited 500 ms, although high-lane work was still waiting.
    expect(at).toBe(50);
    expect(queue.laneLength('high')).toBeGreaterThan(0);
  });

  it('without aging, the low lane waits while high work exists', async () => {
    const { queue, clock } = setup({ lowLane: { qps: 1000, burst: 10, maxWaitMs: 60_000 } });
    queue.add('resync', 'low');
    for (let tick = 0; tick < 100; tick++) {
      queue.add(`user-${tick}`, 'high');
      queue.add(`user-${tick}-b`, 'high');
      const item = (await queue.get())!;
      expect(item.key).not.toBe('resync');
      queue.done(item.key);
      await clock.advance(10);
    }
  });

  it('shuts down: waiting gets resolve undefined, adds are ignored, in-flight work drains', async () => {
    const { queue } = setup();
    queue.add('a');
    await queue.get();
    queue.add('a');
    const waiting = pending(queue);
    queue.shutDown();
    await flushPromises();
    expect(waiting.get()).toBeUndefined();
    queue.add('c');
    expect(queue.len()).toBe(0);
    expect(await queue.get()).toBeUndefined();
    let drained = false;
    void queue.drain().then(() => (drained = true));
    await flushPromises();
    expect(drained).toBe(false);
    queue.done('a');
    await flushPromises();
    expect(drained).toBe(true);
    // The re-add of `a` during processing was dropped with the rest of the waiting work.
    expect(queue.len()).toBe(0);
  });

  it('publishes client-go-named metrics', async () => {
    const { queue, clock, registry } = setup();
    queue.add('a');
    queue.add('b', 'low');
    expect(await metricValue(registry, 'workqueue_depth', { name: 'test', priority: 'high' })).toBe(1);
    expect(await metricValue(registry, 'workqueue_depth', { name: 'test', priority: 'low' })).toBe(1);
    await clock.advance(2000);
    await queue.get();
    await clock.advance(3000);
    expect(await metricValue(registry, 'workqueue_longest_running_processor_seconds', { name: 'test' })).toBe(
      3,
    );
    queue.done('a');
    queue.addRateLimited('a');
    expect(await metricValue(registry, 'workqueue_adds_total', { name: 'test' })).toBe(2);
    expect(await metricValue(registry, 'workqueue_retries_total', { name: 'test' })).toBe(1);
    expect(await metricValue(registry, 'workqueue_depth', { name: 'test', priority: 'high' })).toBe(0);
    const text = await registry.metrics();
    expect(text).toContain('workqueue_queue_duration_seconds_sum{name="test"} 2');
    expect(text).toContain('workqueue_work_duration_seconds_count{name="test"} 1');
  });

  it('lets two queues share one registry', () => {
    const registry = new Registry();
    new WorkQueue({ name: 'one', registry });
    expect(() => new WorkQueue({ name: 'two', registry })).not.toThrow();
  });
});
