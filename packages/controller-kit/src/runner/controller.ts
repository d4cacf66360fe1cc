import { randomUUID } from 'node:crypto';

import { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

import { realClock, sleep, untilAborted, type Clock } from '../clock.ts';
import { ControllerKitError, ControllerKitErrorCode, errorMessage, TerminalError } from '../errors.ts';
import { NOOP_TRACER } from '../tracing/tracing.ts';
import { WorkQueue, type LowLaneOptions, type QueueItem } from '../queue/work-queue.ts';
import type { BackoffOptions } from '../queue/item-backoff.ts';
import type { Lane } from '../queue/lane.ts';
import { ReconcileMetrics, type ReconcileOutcome } from './reconcile-metrics.ts';
import type { Reconciler, ReconcileResult } from './reconciler.ts';

/** How a controller writes and reads its queue's string keys: a key codec (@cellfed/federation's key-codec.ts). */
export interface KeyReader<K> {
  format(key: K): string;
  parse(text: string): K;
}

export interface ControllerOptions<K> {
  /** Names the controller in metrics, logs and its queue. */
  name: string;
  reconciler: Reconciler<K>;
  /** Reads each key the queue holds; a key it refuses is logged and dropped (retrying cannot help). */
  keys: KeyReader<K>;
  registry: Registry;
  logger: Logger;
  clock?: Clock;
  /** Reconciles running at once (never two for one key). Default 1. */
  workers?: number;
  /** A reconcile's signal aborts after this long and a throw after it counts as a timeout. Default 60 s. */
  reconcileTimeoutMs?: number;
  backoff?: BackoffOptions;
  lowLane?: LowLaneOptions;
  /** The cell a key belongs to, for logs. Default: its `cell` field, if it has one. */
  cellOf?: (key: K) => string | undefined;
  /** Makes one span per reconcile. Default: none. */
  tracer?: Tracer;
}

/**
 * The one loop every controller shares (controller-runtime's controller): N workers take keys from the
 * queue, call the reconciler with a timeout signal and a child logger, and turn the outcome into a
 * requeue, a backoff retry, or a forget, counting each in metrics. Event handlers only `queue.add` keys.
 */
export class Controller<K = string> {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly reconciler: Reconciler<K>;
  private readonly keys: KeyReader<K>;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly workers: number;
  private readonly timeoutMs: number;
  private readonly metrics: ReconcileMetrics;
  private readonly cellOf: (key: K) => string | undefined;
  private readonly tracer: Tracer;
  private readonly inFlight = new Set<AbortController>();
  private running: Promise<void>[] | undefined;

  /** Queues `key` (written with the controller's codec); see WorkQueue.add. */
  enqueue(key: K, lane?: Lane): void {
    this.queue.add(this.keys.format(key), lane);
  }

  constructor(options: ControllerOptions<K>) {
    this.name = options.name;
    this.reconciler = options.reconciler;
    this.keys = options.keys;
    this.clock = options.clock ?? realClock;
    this.workers = options.workers ?? 1;
    this.timeoutMs = options.reconcileTimeoutMs ?? 60_000;
    this.log = options.logger.child({ controller: options.name });
    this.cellOf = options.cellOf ?? defaultCellOf;
    this.tracer = options.tracer ?? NOOP_TRACER;
    this.queue = new WorkQueue({
      name: options.name,
      clock: this.clock,
      registry: options.registry,
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(options.lowLane ? { lowLane: options.lowLane } : {}),
    });
    this.metrics = new ReconcileMetrics(options.registry, options.name, this.workers);
  }

  /** Runs the workers until `signal` aborts, then stops as {@link stop} does: a manager Runnable. */
  async run(signal: AbortSignal, drainTimeoutMs?: number): Promise<void> {
    this.start();
    await untilAborted(signal);
    await this.stop(drainTimeoutMs);
  }

  /** Starts the workers. */
  start(): void {
    if (this.running) return;
    this.log.info({ workers: this.workers }, 'starting workers');
    this.running = Array.from({ length: this.workers }, () => this.work());
  }

  /**
   * Stops taking keys and waits up to `drainTimeoutMs` for reconciles in progress; after that their signals
   * abort and `stop` returns without them. Resolves whether everything in hand finished.
   */
  async stop(drainTimeoutMs = 30_000): Promise<boolean> {
    this.queue.shutDown();
    if (!this.running) return true;
    const finished = Promise.all(this.running).then(() => true);
    const drained = await Promise.race([finished, sleep(this.clock, drainTimeoutMs).then(() => false)]);
    if (!drained) {
      this.log.warn(
        { inFlight: this.inFlight.size, drainTimeoutMs },
        'reconciles still running at shutdown; aborting them',
      );
      for (const controller of this.inFlight) controller.abort(new Error('controller stopped'));
    } else {
      this.log.info('stopped; all work in hand finished');
    }
    return drained;
  }

  private async work(): Promise<void> {
    for (let item = await this.queue.get(); item; item = await this.queue.get()) {
      try {
        await this.process(item);
      } finally {
        this.queue.done(item.key);
      }
    }
  }

  private async process({ key: text, lane }: QueueItem): Promise<void> {
    let key: K;
    try {
      key = this.keys.parse(text);
    } catch (error) {
      this.metrics.terminalErrors.inc();
      this.queue.forget(text);
      this.log.error({ key: text, err: errorMessage(error) }, 'not a key of this controller; dropped');
      return;
    }
    const abort = new AbortController();
    let timedOut = false;
    const timer = this.clock.setTimer(this.timeoutMs, () => {
      timedOut = true;
      abort.abort(
        new ControllerKitError(
          ControllerKitErrorCode.ReconcileTimeout,
          `reconcile of ${text} exceeded ${this.timeoutMs} ms`,
        ),
      );
    });
    const cell = this.cellOf(key);
    const reconcileID = randomUUID();
    const log = this.log.child({ ...(cell ? { cell } : {}), key: text, reconcileID });
    const span = this.tracer.startSpan(`reconcile ${this.name}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        'cellfed.controller': this.name,
        'cellfed.key': text,
        'cellfed.lane': lane,
        'cellfed.reconcile_id': reconcileID,
        ...(cell ? { 'cellfed.cell': cell } : {}),
      },
    });
    const started = this.clock.now();
    this.inFlight.add(abort);
    this.metrics.activeWorkers.inc();
    let outcome: ReconcileOutcome = 'error';
    try {
      // Promise.resolve().then turns a synchronous throw into a rejection like any other.
      const result = await Promise.resolve().then(() =>
        this.reconciler.reconcile({ key, lane, signal: abort.signal, log }),
      );
      outcome = this.afterSuccess(text, lane, result ?? {});
    } catch (error) {
      outcome = 'error';
      this.afterError(text, lane, error, timedOut, log);
      failSpan(span, error, timedOut);
    } finally {
      span.setAttribute('cellfed.outcome', outcome);
      span.end();
      timer.cancel();
      this.inFlight.delete(abort);
      this.metrics.activeWorkers.dec();
    }
    this.metrics.total[outcome].inc();
    this.metrics.duration.observe((this.clock.now() - started) / 1000);
  }

  private afterSuccess(key: string, lane: QueueItem['lane'], result: ReconcileResult): ReconcileOutcome {
    if (result.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
      this.queue.forget(key);
      this.queue.addAfter(key, result.requeueAfterMs, lane);
      return 'requeue_after';
    }
    if (result.requeue) {
      this.queue.addRateLimited(key, lane);
      return 'requeue';
    }
    this.queue.forget(key);
    return 'success';
  }

  private afterError(
    key: string,
    lane: QueueItem['lane'],
    error: unknown,
    timedOut: boolean,
    log: Logger,
  ): void {
    this.metrics.errors.inc();
    if (timedOut) this.metrics.timeouts.inc();
    if (error instanceof TerminalError) {
      this.metrics.terminalErrors.inc();
      this.queue.forget(key);
      log.error({ err: error }, 'reconcile failed for good; not retrying');
      return;
    }
    const retries = this.queue.numRequeues(key);
    log.error(
      { err: error instanceof Error ? error : new Error(errorMessage(error)), retries, timedOut },
      timedOut ? 'reconcile timed out; retrying with backoff' : 'reconcile failed; retrying with backoff',
    );
    this.queue.addRateLimited(key, lane);
  }
}

function failSpan(span: Span, error: unknown, timedOut: boolean): void {
  span.recordException(error instanceof Error ? error : new Error(errorMessage(error)));
  span.setStatus({ code: SpanStatusCode.ERROR, message: timedOut ? 'timed out' : errorMessage(error) });
}

function defaultCellOf(key: unknown): string | undefined {
  const cell = typeof key === 'object' && key !== null ? (key as { cell?: unknown }).cell : undefined;
  return typeof cell === 'string' ? cell : undefined;
}
