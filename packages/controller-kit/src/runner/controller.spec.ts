import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { Registry } from 'prom-client';

import { TerminalError } from '../errors.ts';
import { CELL_OBJECT_KEYS, formatKey, type CellObjectKey } from '../object-key.ts';
import { FakeClock, flushPromises } from '../testing/fake-clock.ts';
import { memoryLogger } from '../testing/memory-logger.ts';
import { metricValue } from '../testing/metric-value.ts';
import { recordingTracer } from '../testing/recording-tracer.ts';
import { Controller } from './controller.ts';
import type { Reconciler, ReconcileRequest } from './reconciler.ts';

type Request = ReconcileRequest<CellObjectKey>;
type Handler = (request: Request, call: number) => ReturnType<Reconciler<CellObjectKey>['reconcile']>;

/** The key a reconcile was asked for, as the queue writes it. */
const text = (request: Request) => formatKey(request.key);

function setup(
  handler: Handler,
  options: { workers?: number; reconcileTimeoutMs?: number; tracer?: Tracer } = {},
) {
  const clock = new FakeClock();
  const registry = new Registry();
  const { logger, lines } = memoryLogger();
  const calls: Request[] = [];
  const controller = new Controller({
    name: 'test',
    registry,
    logger,
    clock,
    backoff: { baseMs: 100, maxMs: 10_000 },
    keys: CELL_OBJECT_KEYS,
    ...options,
    reconciler: { reconcile: (request) => handler(request, calls.push(request)) },
  });
  const metric = (name: string, labels: Record<string, string> = {}) => metricValue(registry, name, labels);
  return { clock, registry, controller, calls, lines, metric };
}

describe('Controller', () => {
  it('creates every reconcile series at zero before any work', async () => {
    const { metric } = setup(async () => undefined, { workers: 3 });
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      expect(await metric('controller_runtime_reconcile_total', { controller: 'test', result })).toBe(0);
    }
    expect(await metric('controller_runtime_reconcile_errors_total', { controller: 'test' })).toBe(0);
    expect(await metric('controller_runtime_terminal_reconcile_errors_total', { controller: 'test' })).toBe(
      0,
    );
    expect(await metric('controller_runtime_max_concurrent_reconciles', { controller: 'test' })).toBe(3);
  });

  it('reconciles a key once per change and counts success', async () => {
    const { controller, calls, metric } = setup(async () => undefined);
    controller.start();
    controller.queue.add('cell-a/default/web');
    await flushPromises();
    expect(calls.map(text)).toEqual(['cell-a/default/web']);
    expect(await metric('controller_runtime_reconcile_total', { result: 'success' })).toBe(1);
    await controller.stop();
  });

  it('retries a throwing reconcile with backoff, then forgets the key once it succeeds', async () => {
    const { controller, calls, clock, metric } = setup(async (_request, call) => {
      if (call < 3) throw new Error('apiserver said no');
    });
    controller.start();
    controller.queue.add('cell-a/ns/x');
    await flushPromises();
    expect(calls).toHaveLength(1);
    await clock.advance(99);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(calls).toHaveLength(2);
    await clock.advance(200);
    expect(calls).toHaveLength(3);
    expect(await metric('controller_runtime_reconcile_total', { result: 'error' })).toBe(2);
    expect(await metric('controller_runtime_reconcile_errors_total')).toBe(2);
    expect(await metric('controller_runtime_reconcile_total', { result: 'success' })).toBe(1);
    expect(controller.queue.numRequeues('cell-a/ns/x')).toBe(0);
    await controller.stop();
  });

  it('does not retry a TerminalError and counts it', async () => {
    const { controller, calls, clock, metric } = setup(async () => {
      throw new TerminalError('spec.replicas is negative');
    });
    controller.start();
    controller.queue.add('cell-a/ns/x');
    await clock.advance(60_000);
    expect(calls).toHaveLength(1);
    expect(await metric('controller_runtime_terminal_reconcile_errors_total')).toBe(1);
    expect(await metric('controller_runtime_reconcile_total', { result: 'error' })).toBe(1);
    await controller.stop();
  });

  it('requeues after the time the reconciler asks for', async () => {
    const { controller, calls, clock, metric } = setup(async (_request, call) =>
      call === 1 ? { requeueAfterMs: 5000 } : undefined,
    );
    controller.start();
    controller.queue.add('cell-a/ns/x');
    await clock.advance(4999);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(calls).toHaveLength(2);
    expect(await metric('controller_runtime_reconcile_total', { result: 'requeue_after' })).toBe(1);
    await controller.stop();
  });

  it('aborts a reconcile at its timeout and retries it', async () => {
    const { controller, calls, clock, metric } = setup(
      (request, call) =>
        call === 1
          ? new Promise((_resolve, reject) =>
              request.signal.addEventListener('abort', () => reject(request.signal.reason)),
            )
          : Promise.resolve(),
      { reconcileTimeoutMs: 1000 },
    );
    controller.start();
    controller.queue.add('cell-a/ns/slow');
    await clock.advance(999);
    expect(calls[0]!.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(await metric('cellfed_reconcile_timeouts_total')).toBe(1);
    await clock.advance(100);
    expect(calls).toHaveLength(2);
    await controller.stop();
  });

  it('never runs one key on two workers, while other keys proceed', async () => {
    const release = new Map<string, () => void>();
    let running = 0;
    let maxRunningOfA = 0;
    const { controller, calls } = setup(
      (request) =>
        new Promise<void>((resolve) => {
          if (text(request) === 'c/ns/a') maxRunningOfA = Math.max(maxRunningOfA, ++running);
          release.set(text(request), () => {
            if (text(request) === 'c/ns/a') running--;
            resolve();
          });
        }),
      { workers: 4 },
    );
    controller.start();
    controller.queue.add('c/ns/a');
    await flushPromises();
    controller.queue.add('c/ns/a');
    controller.queue.add('c/ns/b');
    await flushPromises();
    expect(calls.map(text)).toEqual(['c/ns/a', 'c/ns/b']);
    release.get('c/ns/a')!();
    await flushPromises();
    expect(calls.map(text)).toEqual(['c/ns/a', 'c/ns/b', 'c/ns/a']);
    release.get('c/ns/a')!();
    release.get('c/ns/b')!();
    await flushPromises();
    expect(maxRunningOfA).toBe(1);
    await controller.stop();
  });

  it('logs with controller, cell, key and a reconcile id', async () => {
    const { controller, lines } = setup(async (request) => {
      request.log.info('hello');
    });
    controller.start();
    controller.enqueue({ cell: 'cell-b', namespace: 'team', name: 'api' });
    controller.queue.add('cell-b/team/web');
    await flushPromises();
    const hellos = lines.filter((line) => line.msg === 'hello');
    expect(hellos[0]).toMatchObject({ controller: 'test', cell: 'cell-b', key: 'cell-b/team/api' });
    expect(hellos[0]!.reconcileID).toMatch(/^[0-9a-f-]{36}$/);
    expect(hellos[1]).toMatchObject({ controller: 'test', cell: 'cell-b', key: 'cell-b/team/web' });
    expect(hellos[1]!.reconcileID).not.toBe(hellos[0]!.reconcileID);
    await controller.stop();
  });

  it('drops a key its codec does not read, as a terminal error, without calling the reconciler', async () => {
    const { controller, calls, lines, metric } = setup(async () => undefined);
    controller.start();
    controller.queue.add('plain-key');
    await flushPromises();
    expect(calls).toEqual([]);
    expect(lines.find((line) => line.key === 'plain-key')).toMatchObject({
      msg: 'not a key of this controller; dropped',
    });
    expect(await metric('controller_runtime_terminal_reconcile_errors_total', { controller: 'test' })).toBe(
      1,
    );
    expect(controller.queue.len()).toBe(0);
    await controller.stop();
  });

  it('makes one span per reconcile with its controller, cell, key and outcome; a failure marks it an error', async () => {
    const { tracer, spans } = recordingTracer();
    const { controller, lines } = setup(
      async (request) => {
        request.log.info('hello');
        if (text(request) === 'cell-b/team/bad') throw new Error('apiserver said no');
      },
      { tracer },
    );
    controller.start();
    controller.queue.add('cell-b/team/api');
    controller.queue.add('cell-b/team/bad');
    await flushPromises();
    await controller.stop();
    const [good, bad] = spans();
    expect(spans()).toHaveLength(2);
    expect(good!.name).toBe('reconcile test');
    expect(good!.attributes).toMatchObject({
      'cellfed.controller': 'test',
      'cellfed.cell': 'cell-b',
      'cellfed.key': 'cell-b/team/api',
      'cellfed.lane': 'high',
      'cellfed.outcome': 'success',
    });
    expect(good!.status.code).toBe(SpanStatusCode.UNSET);
    // The span and the log lines of one reconcile share its id.
    const hello = lines.find((line) => line.msg === 'hello' && line.key === 'cell-b/team/api');
    expect(good!.attributes['cellfed.reconcile_id']).toBe(hello!.reconcileID);
    expect(bad!.attributes).toMatchObject({ 'cellfed.key': 'cell-b/team/bad', 'cellfed.outcome': 'error' });
    expect(bad!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'apiserver said no' });
    expect(bad!.events.map((event) => event.name)).toEqual(['exception']);
  });

  it('turns a synchronous throw into a retry', async () => {
    const { controller, calls, clock } = setup(((_request: Request, call: number) => {
      if (call === 1) throw new Error('sync');
      return Promise.resolve();
    }) as Handler);
    controller.start();
    controller.queue.add('c/ns/x');
    await clock.advance(100);
    expect(calls).toHaveLength(2);
    await controller.stop();
  });

  it('drains work in hand on stop, and aborts what outlives the bound', async () => {
    let finishFirst: () => void = () => undefined;
    const { controller, calls, clock } = setup(
      (request) =>
        text(request) === 'c/ns/quick'
          ? new Promise<void>((resolve) => (finishFirst = resolve))
          : new Promise<void>(() => undefined),
      { workers: 2 },
    );
    controller.start();
    controller.queue.add('c/ns/quick');
    controller.queue.add('c/ns/stuck');
    await flushPromises();
    let drained: boolean | undefined;
    void controller.stop(5000).then((value) => (drained = value));
    finishFirst();
    await clock.advance(4999);
    expect(drained).toBeUndefined();
    expect(calls.find((call) => text(call) === 'c/ns/stuck')!.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(drained).toBe(false);
    expect(calls.find((call) => text(call) === 'c/ns/stuck')!.signal.aborted).toBe(true);
  });
});
