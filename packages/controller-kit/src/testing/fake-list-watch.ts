import { type KubeObject } from '@cellfed/federation';

import { ApiError, type ApiStatus } from '../kube/api-error.ts';
import type { WatchEvent } from '../kube/watch-lines.ts';
import type { ListPage, ListWatch } from '../informer/list-watch.ts';

interface Stream {
  push(event: WatchEvent<KubeObject> | Error | 'end'): void;
}

/**
 * An in-memory apiserver for one resource: objects with increasing resourceVersions, paged lists, watches
 * that receive every change, and knobs to fail lists and watches, send 410s or go silent.
 */
export class FakeListWatch implements ListWatch {
  private readonly objects = new Map<string, KubeObject>();
  private revision = 1;
  private readonly streams = new Set<Stream>();
  /** Every change with its revision, for watches that start in the past (as etcd keeps history). */
  private readonly history: { revision: number; event: WatchEvent<KubeObject> }[] = [];
  private compacted = 0;
  readonly listCalls: { continue?: string }[] = [];
  readonly watchCalls: { resourceVersion: string; timeoutSeconds: number }[] = [];
  /** Errors the next lists throw, in order. */
  readonly listFailures: Error[] = [];
  /** Errors the next watch calls throw, in order. */
  readonly watchFailures: Error[] = [];

  get openWatches(): number {
    return this.streams.size;
  }

  put(namespace: string, name: string, extra: Partial<KubeObject> = {}): KubeObject {
    const key = `${namespace}/${name}`;
    const existed = this.objects.has(key);
    const object: KubeObject = {
      ...extra,
      metadata: { ...extra.metadata, namespace, name, resourceVersion: String(++this.revision) },
    };
    this.objects.set(key, object);
    this.record({ type: existed ? 'MODIFIED' : 'ADDED', object: structuredClone(object) });
    return object;
  }

  remove(namespace: string, name: string): void {
    const object = this.objects.get(`${namespace}/${name}`);
    if (!object) return;
    this.objects.delete(`${namespace}/${name}`);
    const revision = String(++this.revision);
    this.record({
      type: 'DELETED',
      object: { ...object, metadata: { ...object.metadata, resourceVersion: revision } },
    });
  }

  /** Changes the store without telling the open watches (what an informer misses while disconnected). */
  putQuietly(namespace: string, name: string): void {
    const streams = [...this.streams];
    this.streams.clear();
    this.put(namespace, name);
    streams.forEach((stream) => this.streams.add(stream));
  }

  removeQuietly(namespace: string, name: string): void {
    const streams = [...this.streams];
    this.streams.clear();
    this.remove(namespace, name);
    streams.forEach((stream) => this.streams.add(stream));
  }

  /** Forgets history up to now: a watch from an older resourceVersion gets 410. */
  compact(): void {
    this.compacted = this.revision;
    this.history.length = 0;
  }

  bookmark(): void {
    this.broadcast({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(++this.revision) } } });
  }

  sendStatus(status: ApiStatus): void {
    this.broadcast({ type: 'ERROR', object: status as unknown as KubeObject });
  }

  /** The server ends every watch cleanly (its timeout). */
  endWatches(): void {
    this.streams.forEach((stream) => stream.push('end'));
    this.streams.clear();
  }

  /** Every watch connection breaks. */
  breakWatches(error = new Error('connection reset')): void {
    this.streams.forEach((stream) => stream.push(error));
    this.streams.clear();
  }

  async list(options: {
    limit: number;
    continue?: string;
    signal: AbortSignal;
  }): Promise<ListPage<KubeObject>> {
    this.listCalls.push(options.continue ? { continue: options.continue } : {});
    const failure = this.listFailures.shift();
    if (failure) throw failure;
    const keys = [...this.objects.keys()].sort();
    const start = options.continue ? Number(options.continue) : 0;
    const items = keys
      .slice(start, start + options.limit)
      .map((key) => structuredClone(this.objects.get(key)!));
    const next = start + options.limit;
    return {
      resourceVersion: String(this.revision),
      items,
      ...(next < keys.length ? { continue: String(next) } : {}),
    };
  }

  async watch(options: {
    resourceVersion: string;
    timeoutSeconds: number;
    signal: AbortSignal;
  }): Promise<AsyncIterable<WatchEvent<KubeObject>>> {
    this.watchCalls.push({
      resourceVersion: options.resourceVersion,
      timeoutSeconds: options.timeoutSeconds,
    });
    if (options.signal.aborted) throw new Error('aborted');
    const failure = this.watchFailures.shift();
    if (failure) throw failure;
    const from = Number(options.resourceVersion);
    if (from < this.compacted) throw goneError();
    const pending: (WatchEvent<KubeObject> | Error | 'end')[] = this.history
      .filter((entry) => entry.revision > from)
      .map((entry) => structuredClone(entry.event));
    let wake: (() => void) | undefined;
    const stream: Stream = {
      push: (item) => {
        pending.push(item);
        wake?.();
      },
    };
    this.streams.add(stream);
    const abort = () =>
      stream.push(options.signal.reason instanceof Error ? options.signal.reason : new Error('aborted'));
    options.signal.addEventListener('abort', abort, { once: true });
    const streams = this.streams;
    return (async function* () {
      try {
        for (;;) {
          while (pending.length === 0) await new Promise<void>((resolve) => (wake = resolve));
          const item = pending.shift()!;
          if (item === 'end') return;
          if (item instanceof Error) throw item;
          yield item;
        }
      } finally {
        streams.delete(stream);
        options.signal.removeEventListener('abort', abort);
      }
    })();
  }

  private record(event: WatchEvent<KubeObject>): void {
    this.history.push({ revision: this.revision, event: structuredClone(event) });
    this.broadcast(event);
  }

  private broadcast(event: WatchEvent<KubeObject>): void {
    this.streams.forEach((stream) => stream.push(structuredClone(event)));
  }
}

/** The error an apiserver answers a watch or list with when the resource version is compacted away. */
export function goneError(): ApiError {
  return new ApiError(
    410,
    { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
    'watch',
  );
}
