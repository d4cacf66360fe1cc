import type { Counter, Gauge, Registry } from 'prom-client';

import { counter, gauge } from '../metrics/registry-metrics.ts';

export type RelistReason = 'initial' | 'expired' | 'watchdog';

/** One informer's series; removed when it stops, since cells come and go. */
export class InformerMetrics {
  private readonly labels: { cell: string; resource: string };
  private readonly relists: Counter<'cell' | 'resource' | 'reason'>;
  private readonly errors: Counter<'cell' | 'resource'>;
  private readonly objects: Gauge<'cell' | 'resource'>;
  private readonly synced: Gauge<'cell' | 'resource'>;

  constructor(registry: Registry, cell: string, resource: string) {
    this.labels = { cell, resource };
    this.relists = counter(
      registry,
      'cellfed_informer_relists_total',
      'Full lists by an informer, by reason',
      ['cell', 'resource', 'reason'],
    );
    this.errors = counter(
      registry,
      'cellfed_informer_watch_errors_total',
      'Failed lists and watches (retried with backoff)',
      ['cell', 'resource'],
    );
    this.objects = gauge(registry, 'cellfed_informer_objects', 'Objects in an informer cache', [
      'cell',
      'resource',
    ]);
    this.synced = gauge(registry, 'cellfed_informer_synced', '1 once an informer has listed', [
      'cell',
      'resource',
    ]);
    for (const reason of ['initial', 'expired', 'watchdog'] as const)
      this.relists.inc({ ...this.labels, reason }, 0);
    this.errors.inc(this.labels, 0);
    this.objects.set(this.labels, 0);
    this.synced.set(this.labels, 0);
  }

  relist(reason: RelistReason): void {
    this.relists.inc({ ...this.labels, reason });
  }

  watchError(): void {
    this.errors.inc(this.labels);
  }

  setObjects(count: number): void {
    this.objects.set(this.labels, count);
  }

  setSynced(): void {
    this.synced.set(this.labels, 1);
  }

  remove(): void {
    for (const reason of ['initial', 'expired', 'watchdog']) this.relists.remove({ ...this.labels, reason });
    this.errors.remove(this.labels);
    this.objects.remove(this.labels);
    this.synced.remove(this.labels);
  }
}
