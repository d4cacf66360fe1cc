import { Counter, Histogram, type Registry } from 'prom-client';

/** The backup controller's own metrics, on the injected registry. */
export class BackupMetrics {
  readonly operations: Counter<'operation'>;
  readonly lagSeconds: Histogram;

  constructor(registry: Registry) {
    const registers = [registry];
    this.operations = new Counter({
      name: 'cellfed_backup_operations_total',
      help: 'Backups written, stale backups deleted, backups promoted to the real object, and stale copies purged from a Down cell',
      labelNames: ['operation'],
      registers,
    });
    this.lagSeconds = new Histogram({
      name: 'cellfed_backup_replication_lag_seconds',
      help: "From a change of an object seen in its cell's watch to its backup written in the backup cell",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
  }
}

/**
 * When each object's oldest change not yet in its backup was seen: the start of its replication lag. A
 * later change before the backup is written keeps the earlier time, so the lag is the worst the change saw.
 */
export class LagClock {
  private readonly since = new Map<string, number>();

  seen(key: string, now: number): void {
    if (!this.since.has(key)) this.since.set(key, now);
  }

  /** The seconds since the first unreplicated change of `key`, forgetting it; undefined when none. */
  replicated(key: string, now: number): number | undefined {
    const since = this.since.get(key);
    this.since.delete(key);
    return since === undefined ? undefined : (now - since) / 1000;
  }

  /** Nothing to replicate for `key` (it is deleted, or its backup was already current). */
  forget(key: string): void {
    this.since.delete(key);
  }
}
