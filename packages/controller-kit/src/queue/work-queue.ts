import type { Registry } from 'prom-client';

import { realClock, type Clock, type Timer } from '../clock.ts';
import { Fifo } from './fifo.ts';
import { ItemBackoff, type BackoffOptions } from './item-backoff.ts';
import { moreUrgent, type Lane } from './lane.ts';
import { MinHeap } from './min-heap.ts';
import { QueueMetrics } from './queue-metrics.ts';
import { TokenBucket } from './token-bucket.ts';

export interface LowLaneOptions {
  /** Low-lane items handed out per second at most. Default 50. */
  qps?: number;
  /** Low-lane items handed out at once after a quiet period. Default 100. */
  burst?: number;
  /**
   * A low-lane item that has waited this long goes ahead of the high lane (still within the token bucket),
   * so a steady stream of user changes cannot starve resyncs. Default 30 s.
   */
  maxWaitMs?: number;
}

export interface WorkQueueOptions {
  /** Names the queue in metrics (`name` label) and logs. */
  name: string;
  clock?: Clock;
  /** Metrics go to this registry when given; none are recorded otherwise. */
  registry?: Registry;
  backoff?: BackoffOptions;
  lowLane?: LowLaneOptions;
}

/** What `get` hands a worker. */
export interface QueueItem {
  key: string;
  lane: Lane;
}

interface DirtyEntry {
  lane: Lane;
  /** Identifies the entry's current place in a lane; older places are skipped as stale. */
  seq: number;
  /** When the key became dirty: the start of its queue latency and of its aging. */
  at: number;
  queued: boolean;
}

interface Queued {
  key: string;
  seq: number;
  at: number;
}

interface Delayed {
  key: string;
  lane: Lane;
  at: number;
}

/**
 * A two-lane work queue with client-go's guarantees: a key is never handed to two workers at once (a key
 * added while it is processed waits in the dirty set until `done`), adds of a waiting key collapse into
 * one, failed keys come back after a per-key exponential backoff. The urgent lane is for keys a client is
 * waiting on and always goes first; the high lane is for user-driven changes; the low lane (initial lists,
 * resyncs, scans) is behind a token bucket and ages so it cannot starve the high lane.
 *
 * After `shutDown`, `get` resolves `undefined` at once and adds are ignored; waiting items are dropped
 * (controllers are level-based: the next leader lists everything again). `drain` waits for work in hand.
 */
export class WorkQueue {
  readonly name: string;
  private readonly clock: Clock;
  private readonly backoff: ItemBackoff;
  private readonly bucket: TokenBucket;
  private readonly maxWaitMs: number;
  private readonly metrics: QueueMetrics | undefined;

  private readonly dirty = new Map<string, DirtyEntry>();
  /** Keys handed out and not yet done, with when they were handed out. */
  private readonly processing = new Map<string, number>();
  private readonly lanes: Record<Lane, Fifo<Queued>> = {
    urgent: new Fifo(),
    high: new Fifo(),
    low: new Fifo(),
  };
  private readonly depth: Record<Lane, number> = { urgent: 0, high: 0, low: 0 };
  private seq = 0;

  private readonly waiters: ((item: QueueItem | undefined) => void)[] = [];
  private tokenTimer: Timer | undefined;

  private readonly delayed = new Map<string, Delayed>();
  private readonly delayHeap = new MinHeap<Delayed>();
  private delayTimer: { timer: Timer; at: number } | undefined;

  private readonly drainWaiters: (() => void)[] = [];
  private shutdown = false;

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.backoff = new ItemBackoff(options.backoff);
    const low = options.lowLane ?? {};
    this.bucket = new TokenBucket(low.qps ?? 50, low.burst ?? 100, this.clock.now());
    this.maxWaitMs = low.maxWaitMs ?? 30_000;
    this.metrics = options.registry
      ? new QueueMetrics(options.registry, options.name, {
          unfinishedWorkSeconds: () => this.unfinishedWorkSeconds(),
          longestRunningProcessorSeconds: () => this.longestRunningSeconds(),
        })
      : undefined;
  }

  /** Marks `key` as needing work. Re-adding a waiting key does nothing, except move it to a more urgent lane. */
  add(key: string, lane: Lane = 'high'): void {
    if (this.shutdown) return;
    this.metrics?.adds.inc();
    const entry = this.dirty.get(key);
    if (entry) {
      if (moreUrgent(lane, entry.lane) !== entry.lane) {
        if (entry.queued) this.setDepth(entry.lane, -1);
        entry.lane = lane;
        entry.seq = ++this.seq;
        if (entry.queued) this.enqueue(key, entry);
      }
      return;
    }
    const fresh: DirtyEntry = { lane, seq: ++this.seq, at: this.clock.now(), queued: false };
    this.dirty.set(key, fresh);
    if (this.processing.has(key)) return;
    this.enqueue(key, fresh);
  }

  /** Adds `key` after `delayMs`. A key already waiting for a delay keeps the earlier time. */
  addAfter(key: string, delayMs: number, lane: Lane = 'high'): void {
    if (this.shutdown) return;
    if (delayMs <= 0) {
      this.add(key, lane);
      return;
    }
    const at = this.clock.now() + delayMs;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) {
      existing.lane = moreUrgent(existing.lane, lane);
      return;
    }
    const item: Delayed = { key, lane: existing ? moreUrgent(existing.lane, lane) : lane, at };
    this.delayed.set(key, item);
    this.delayHeap.push(item);
    this.armDelayTimer();
  }

  /** Adds `key` after its backoff: 5 ms, 10 ms, 20 ms, … per failure since it was last forgotten. */
  addRateLimited(key: string, lane: Lane = 'high'): void {
    if (this.shutdown) return;
    this.metrics?.retries.inc();
    this.addAfter(key, this.backoff.next(key), lane);
  }

  /** Clears the backoff of `key` (it succeeded, or it will never be retried). */
  forget(key: string): void {
    this.backoff.forget(key);
  }

  /** Failures of `key` since it was last forgotten. */
  numRequeues(key: string): number {
    return this.backoff.retries(key);
  }

  /** The next key to work on; `undefined` once the queue is shut down. Call `done(key)` when finished. */
  get(): Promise<QueueItem | undefined> {
    if (this.shutdown) return Promise.resolve(undefined);
    const item = this.takeNext();
    if (item) return Promise.resolve(item);
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.armTokenTimer(this.clock.now());
    });
  }

  /** Ends work on `key`; if it was added meanwhile it goes back into its lane now. */
  done(key: string): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.metrics?.workDuration.observe((this.clock.now() - started) / 1000);
    const entry = this.dirty.get(key);
    if (entry && !this.shutdown) this.enqueue(key, entry);
    if (this.processing.size === 0) this.drainWaiters.splice(0).forEach((resolve) => resolve());
  }

  /** Keys waiting in every lane (not those being processed or delayed). */
  len(): number {
    return this.depth.urgent + this.depth.high + this.depth.low;
  }

  /** Keys waiting in one lane. */
  laneLength(lane: Lane): number {
    return this.depth[lane];
  }

  /** Keys handed out and not yet done. */
  inFlight(): number {
    return this.processing.size;
  }

  get shuttingDown(): boolean {
    return this.shutdown;
  }

  /** Stops handing out work: waiting `get`s resolve `undefined`, new adds are ignored. */
  shutDown(): void {
    if (this.shutdown) return;
    this.shutdown = true;
    this.tokenTimer?.cancel();
    this.delayTimer?.timer.cancel();
    this.delayed.clear();
    this.delayHeap.clear();
    this.dirty.clear();
    for (const lane of ['urgent', 'high', 'low'] as const) {
      this.lanes[lane].clear();
      this.setDepth(lane, -this.depth[lane]);
    }
    this.waiters.splice(0).forEach((resolve) => resolve(undefined));
  }

  /** Resolves when no key is being processed. */
  drain(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private enqueue(key: string, entry: DirtyEntry): void {
    entry.queued = true;
    this.lanes[entry.lane].push({ key, seq: entry.seq, at: entry.at });
    this.setDepth(entry.lane, 1);
    this.dispatch();
  }

  private dispatch(): void {
    while (this.waiters.length > 0) {
      const item = this.takeNext();
      if (!item) return;
      this.waiters.shift()!(item);
    }
  }

  private takeNext(): QueueItem | undefined {
    if (this.head('urgent')) return this.pop('urgent', this.clock.now());
    const high = this.head('high');
    const low = this.head('low');
    if (!high && !low) return undefined;
    const now = this.clock.now();
    if (low && (!high || now - low.at >= this.maxWaitMs) && this.bucket.tryTake(now)) {
      return this.pop('low', now);
    }
    if (high) return this.pop('high', now);
    this.armTokenTimer(now);
    return undefined;
  }

  /** The lane's first live entry, dropping places left behind by a move to another lane or a shutdown. */
  private head(lane: Lane): Queued | undefined {
    const fifo = this.lanes[lane];
    for (;;) {
      const first = fifo.peek();
      if (!first) return undefined;
      const entry = this.dirty.get(first.key);
      if (entry && entry.queued && entry.seq === first.seq) return first;
      fifo.shift();
    }
  }

  private pop(lane: Lane, now: number): QueueItem {
    const queued = this.lanes[lane].shift()!;
    this.dirty.delete(queued.key);
    this.processing.set(queued.key, now);
    this.setDepth(lane, -1);
    this.metrics?.queueDuration.observe((now - queued.at) / 1000);
    return { key: queued.key, lane };
  }

  private armTokenTimer(now: number): void {
    if (this.tokenTimer || this.waiters.length === 0 || this.depth.low === 0) return;
    this.tokenTimer = this.clock.setTimer(this.bucket.waitMs(now), () => {
      this.tokenTimer = undefined;
      this.dispatch();
    });
  }

  private armDelayTimer(): void {
    const next = this.delayHeap.peek();
    if (!next || (this.delayTimer && this.delayTimer.at <= next.at)) return;
    this.delayTimer?.timer.cancel();
    this.delayTimer = {
      at: next.at,
      timer: this.clock.setTimer(next.at - this.clock.now(), () => {
        this.delayTimer = undefined;
        this.releaseDue();
      }),
    };
  }

  private releaseDue(): void {
    const now = this.clock.now();
    for (let next = this.delayHeap.peek(); next && next.at <= now; next = this.delayHeap.peek()) {
      this.delayHeap.pop();
      // A later addAfter with an earlier time replaced this entry; the stale heap node is skipped.
      if (this.delayed.get(next.key) !== next) continue;
      this.delayed.delete(next.key);
      this.add(next.key, next.lane);
    }
    this.armDelayTimer();
  }

  private setDepth(lane: Lane, delta: number): void {
    this.depth[lane] += delta;
    this.metrics?.depth[lane].set(this.depth[lane]);
  }

  private unfinishedWorkSeconds(): number {
    const now = this.clock.now();
    let total = 0;
    for (const started of this.processing.values()) total += now - started;
    return total / 1000;
  }

  private longestRunningSeconds(): number {
    const now = this.clock.now();
    let longest = 0;
    for (const started of this.processing.values()) longest = Math.max(longest, now - started);
    return longest / 1000;
  }
}
