import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { type KubeObject } from '@cellfed/federation';

import { realClock, sleep, type Clock, type Timer } from '../clock.ts';
import { errorMessage } from '../errors.ts';
import { ApiError, isGone, type ApiStatus } from '../kube/api-error.ts';
import { keyOf } from '../object-key.ts';
import type { Lane } from '../queue/lane.ts';
import { InformerMetrics } from './informer-metrics.ts';
import type { ListWatch } from './list-watch.ts';
import { compactMetadata, stripManagedFields } from './object-transforms.ts';

export type InformerEventType = 'added' | 'modified' | 'deleted' | 'resync';

/** What handlers get: which key changed and which lane it belongs in. Read the object from the informer. */
export interface InformerEvent {
  type: InformerEventType;
  /** `cell/namespace/name`. */
  key: string;
  /** `low` for the initial list and periodic resyncs, `high` for changes. */
  lane: Lane;
}

export type InformerHandler = (event: InformerEvent) => void;

export interface InformerOptions<T extends KubeObject> {
  /** The cell the objects come from: the first part of every key. */
  cell: string;
  /** Names the resource in logs and metrics, e.g. `apps/v1/deployments`. */
  resource: string;
  listWatch: ListWatch<T>;
  logger: Logger;
  registry?: Registry;
  clock?: Clock;
  /** Objects per list page. Default 500, as client-go's pager. */
  pageSize?: number;
  /** Backoff after a failed list or watch: doubles from `initialMs` to `maxMs`, with up to 50 % jitter. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** A watch that sends nothing (not even a bookmark) for this long is abandoned and the informer relists. */
  watchdogMs?: number;
  /** Range of the server-side watch timeout, picked at random per watch so watches do not end together. */
  watchTimeoutSeconds?: { min: number; max: number };
  /** Emit a `resync` (low lane) for every object this often; 0 turns it off. */
  resyncPeriodMs?: number;
  /**
   * Applied to every object before it is stored. Default: drop `metadata.managedFields`; for a metadata-only
   * source, keep only compacted metadata (see object-transforms.ts).
   */
  transform?: (object: T) => T;
  random?: () => number;
}

type WatchEnd = 'closed' | 'expired' | 'silent';

/**
 * A cache of one resource in one cell that keeps itself current and never silently stops: it lists (in
 * pages), then watches from the list's resourceVersion with bookmarks; every error is retried with backoff
 * (client-node's informer stops on anything but 410), a 410 relists at once, and a watch that stays silent
 * past the watchdog is abandoned and relisted. Reads return clones, so no caller can corrupt the cache;
 * handlers receive keys only and a throwing handler is logged, never allowed to stop the loop.
 */
export class Informer<T extends KubeObject = KubeObject> {
  readonly cell: string;
  readonly resource: string;
  private readonly listWatch: ListWatch<T>;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly metrics: InformerMetrics | undefined;
  private readonly pageSize: number;
  private readonly backoffInitialMs: number;
  private readonly backoffMaxMs: number;
  private readonly watchdogMs: number;
  private readonly watchTimeout: { min: number; max: number };
  private readonly resyncPeriodMs: number;
  private readonly transform: (object: T) => T;
  private readonly random: () => number;

  private store = new Map<string, T>();
  private readonly handlers: InformerHandler[] = [];
  private resourceVersion: string | undefined;
  private synced = false;
  private readonly syncWaiters: (() => void)[] = [];

  constructor(options: InformerOptions<T>) {
    this.cell = options.cell;
    this.resource = options.resource;
    this.listWatch = options.listWatch;
    this.log = options.logger.child({ cell: options.cell, resource: options.resource });
    this.clock = options.clock ?? realClock;
    this.metrics = options.registry
      ? new InformerMetrics(options.registry, options.cell, options.resource)
      : undefined;
    this.pageSize = options.pageSize ?? 500;
    this.backoffInitialMs = options.backoff?.initialMs ?? 800;
    this.backoffMaxMs = options.backoff?.maxMs ?? 30_000;
    this.watchdogMs = options.watchdogMs ?? 180_000;
    this.watchTimeout = options.watchTimeoutSeconds ?? { min: 300, max: 600 };
    this.resyncPeriodMs = options.resyncPeriodMs ?? 0;
    this.transform =
      options.transform ?? (options.listWatch.metadataOnly ? compactMetadata() : stripManagedFields);
    this.random = options.random ?? Math.random;
  }

  /** Adds a handler; once synced, it first receives every cached key as `added` in the low lane. */
  addHandler(handler: InformerHandler): void {
    this.handlers.push(handler);
    if (this.synced)
      for (const key of this.store.keys()) this.call(handler, { type: 'added', key, lane: 'low' });
  }

  /** Runs until `signal` aborts; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const resync = this.resyncPeriodMs > 0 ? this.scheduleResync(signal) : undefined;
    let failures = 0;
    try {
      while (!signal.aborted) {
        try {
          if (this.resourceVersion === undefined) {
            await this.relist(signal);
            failures = 0;
          }
          const end = await this.watchOnce(this.resourceVersion!, signal);
          if (end === 'closed') {
            failures = 0;
          } else if (!signal.aborted) {
            this.resourceVersion = undefined;
            this.metrics?.relist(end === 'expired' ? 'expired' : 'watchdog');
            this.log.info(
              { reason: end },
              end === 'expired'
                ? 'watch expired (410); relisting'
                : 'watch silent past the watchdog; relisting',
            );
          }
        } catch (error) {
          if (signal.aborted) break;
          if (isGone(error)) {
            this.resourceVersion = undefined;
            this.metrics?.relist('expired');
            this.log.info('resource version expired (410); relisting');
            continue;
          }
          failures++;
          const delayMs = this.backoffDelay(failures);
          this.metrics?.watchError();
          this.log.warn(
            { err: errorMessage(error), failures, delayMs },
            'list/watch failed; retrying after backoff',
          );
          await sleep(this.clock, delayMs, signal);
        }
      }
    } finally {
      resync?.cancel();
      this.metrics?.remove();
      this.log.debug('informer stopped');
    }
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves true once the first list is in the cache, false if `signal` aborts first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => resolve(false);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      });
    });
  }

  /** A copy of the cached object with this key (`cell/namespace/name`). */
  get(key: string): T | undefined {
    const object = this.store.get(key);
    return object === undefined ? undefined : structuredClone(object);
  }

  /**
   * The cached object itself, not a copy, for hot paths that read a field or two (`get` copies the whole
   * object). A change of the object replaces it in the cache and never edits it, so what `peek` gave stays
   * as it was; the caller must not change it.
   */
  peek(key: string): Readonly<T> | undefined {
    return this.store.get(key);
  }

  /** Copies of every cached object. */
  list(): T[] {
    return Array.from(this.store.values(), (object) => structuredClone(object));
  }

  /** A copy of the labels of the cached object with this key: `get` copies the whole object, often per request. */
  labels(key: string): Record<string, string> | undefined {
    const labels = this.store.get(key)?.metadata.labels;
    return labels === undefined ? undefined : { ...labels };
  }

  /**
   * Visits every cached object without copying it, for counting over large caches; `visit` must neither keep
   * nor change what it is given.
   */
  each(visit: (key: string, object: Readonly<T>) => void): void {
    for (const [key, object] of this.store) visit(key, object);
  }

  /** Whether an object with this key is cached (no copy made). */
  has(key: string): boolean {
    return this.store.has(key);
  }

  keys(): string[] {
    return Array.from(this.store.keys());
  }

  get size(): number {
    return this.store.size;
  }

  private async relist(signal: AbortSignal): Promise<void> {
    const started = this.clock.now();
    const fresh = new Map<string, T>();
    let token: string | undefined;
    let resourceVersion: string;
    let pages = 0;
    do {
      const page = await this.listWatch.list({
        limit: this.pageSize,
        ...(token ? { continue: token } : {}),
        signal,
      });
      for (const item of page.items) {
        const object = this.transform(item);
        fresh.set(keyOf(this.cell, object), object);
      }
      token = page.continue;
      resourceVersion = page.resourceVersion;
      if (++pages % 20 === 0) this.log.info({ objects: fresh.size, pages }, 'listing');
    } while (token);

    // The first list fills the cache in the low lane; a later one (after a 410 or a silent watch) reports
    // only what changed while the informer was not watching, and those are real changes.
    const lane: Lane = this.synced ? 'high' : 'low';
    const events: InformerEvent[] = [];
    for (const [key, object] of fresh) {
      const old = this.store.get(key);
      if (!old) events.push({ type: 'added', key, lane });
      else if (old.metadata.resourceVersion !== object.metadata.resourceVersion)
        events.push({ type: 'modified', key, lane });
    }
    for (const key of this.store.keys()) if (!fresh.has(key)) events.push({ type: 'deleted', key, lane });
    this.store = fresh;
    this.resourceVersion = resourceVersion;
    const first = !this.synced;
    this.synced = true;
    this.metrics?.setObjects(fresh.size);
    this.metrics?.setSynced();
    if (first) this.metrics?.relist('initial');
    this.log.info(
      { objects: fresh.size, pages, ms: this.clock.now() - started, resourceVersion },
      first ? 'synced' : 'relisted',
    );
    for (const event of events) this.emit(event);
    if (first) this.syncWaiters.splice(0).forEach((resolve) => resolve());
  }

  private async watchOnce(resourceVersion: string, signal: AbortSignal): Promise<WatchEnd> {
    if (signal.aborted) return 'closed';
    const abort = new AbortController();
    const onAbort = () => abort.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let silent = false;
    let watchdog: Timer | undefined;
    const arm = () => {
      watchdog?.cancel();
      watchdog = this.clock.setTimer(this.watchdogMs, () => {
        silent = true;
        abort.abort(new Error('watch silent past the watchdog'));
      });
    };
    const { min, max } = this.watchTimeout;
    const timeoutSeconds = Math.floor(min + this.random() * (max - min));
    try {
      arm();
      const events = await this.listWatch.watch({ resourceVersion, timeoutSeconds, signal: abort.signal });
      arm();
      for await (const event of events) {
        arm();
        const object = event.object;
        switch (event.type) {
          case 'BOOKMARK':
            this.resourceVersion = object.metadata?.resourceVersion ?? this.resourceVersion;
            break;
          case 'ERROR': {
            const status = object as unknown as ApiStatus;
            if (status.code === 410) return 'expired';
            throw new ApiError(status.code ?? 500, status, `watch ${this.resource}`);
          }
          case 'ADDED':
          case 'MODIFIED':
            this.upsert(this.transform(object));
            break;
          case 'DELETED':
            this.remove(object);
            break;
        }
      }
      return silent ? 'silent' : 'closed';
    } catch (error) {
      if (silent) return 'silent';
      throw error;
    } finally {
      watchdog?.cancel();
      signal.removeEventListener('abort', onAbort);
      abort.abort();
    }
  }

  private upsert(object: T): void {
    const key = keyOf(this.cell, object);
    const existed = this.store.has(key);
    this.store.set(key, object);
    this.resourceVersion = object.metadata.resourceVersion ?? this.resourceVersion;
    this.metrics?.setObjects(this.store.size);
    this.emit({ type: existed ? 'modified' : 'added', key, lane: 'high' });
  }

  private remove(object: T): void {
    const key = keyOf(this.cell, object);
    this.store.delete(key);
    this.resourceVersion = object.metadata?.resourceVersion ?? this.resourceVersion;
    this.metrics?.setObjects(this.store.size);
    this.emit({ type: 'deleted', key, lane: 'high' });
  }

  private emit(event: InformerEvent): void {
    for (const handler of this.handlers) this.call(handler, event);
  }

  private call(handler: InformerHandler, event: InformerEvent): void {
    try {
      handler(event);
    } catch (error) {
      this.log.error(
        { err: errorMessage(error), key: event.key, event: event.type },
        'event handler threw; event dropped for this handler',
      );
    }
  }

  private backoffDelay(failures: number): number {
    const base = Math.min(this.backoffMaxMs, this.backoffInitialMs * 2 ** (failures - 1));
    return Math.round(base * (1 + 0.5 * this.random()));
  }

  private scheduleResync(signal: AbortSignal): Timer {
    let timer: Timer;
    const tick = () => {
      if (signal.aborted) return;
      if (this.synced) for (const key of this.store.keys()) this.emit({ type: 'resync', key, lane: 'low' });
      timer = this.clock.setTimer(this.resyncPeriodMs, tick);
    };
    timer = this.clock.setTimer(this.resyncPeriodMs, tick);
    return { cancel: () => timer.cancel() };
  }
}
