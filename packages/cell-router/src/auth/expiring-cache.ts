import type { Clock } from '@cellfed/controller-kit';

/**
 * A bounded cache whose entries expire, each after its own time to live: the least recently used entry goes
 * first when it is full, so no caller can grow it past `maxEntries` (kube-apiserver's webhook caches are
 * LRUs of the same kind).
 */
export class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly clock: Clock;
  private readonly maxEntries: number;

  constructor(options: { clock: Clock; maxEntries: number }) {
    this.clock = options.clock;
    this.maxEntries = options.maxEntries;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expires <= this.clock.now()) return undefined;
    // Most recently used last: Map keeps insertion order.
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.clock.now() + ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}
