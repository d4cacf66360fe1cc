import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What a migration ended with, for `cellfed_rebalance_migrations_total{result}`. */
export type MigrationResult =
  | 'moved'
  | 'already_moved'
  | 'source_gone'
  | 'source_deleting'
  | 'quota_wait'
  | 'conflict'
  | 'failed'
  | 'called_off';

/** The rebalance controller's own metrics, on the injected registry. */
export class RebalanceMetrics {
  readonly migrations: Counter<'result'>;
  readonly fenceSeconds: Histogram;
  readonly oldCopiesDeleted: Counter;
  readonly pending: Gauge;
  readonly inFlight: Gauge;
  readonly fenceWindow: Gauge;
  readonly moved: Gauge;
  readonly collected: Counter<'action'>;
  readonly followers: Counter<'action'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.migrations = new Counter({
      name: 'cellfed_rebalance_migrations_total',
      help: 'Object migrations by how they ended',
      labelNames: ['result'],
      registers,
    });
    this.fenceSeconds = new Histogram({
      name: 'cellfed_rebalance_write_fence_seconds',
      help: "How long each moved object's writes were fenced: from the migrating label to the migrated label",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.oldCopiesDeleted = new Counter({
      name: 'cellfed_rebalance_old_copies_deleted_total',
      help: 'Old copies deleted deleteAfter after their move',
      registers,
    });
    this.pending = new Gauge({
      name: 'cellfed_rebalance_objects_pending',
      help: 'Objects the current CellSet generation still has to move',
      registers,
    });
    this.inFlight = new Gauge({
      name: 'cellfed_rebalance_objects_in_flight',
      help: 'Objects whose writes are fenced now (labelled migrating)',
      registers,
    });
    this.fenceWindow = new Gauge({
      name: 'cellfed_rebalance_fence_window',
      help: 'Moves that may hold a fence at once now: adapted, up to --window, to keep fences under --fence-target',
      registers,
    });
    this.moved = new Gauge({
      name: 'cellfed_rebalance_objects_moved',
      help: 'Objects of the current CellSet generation already in their new cell',
      registers,
    });
    this.collected = new Counter({
      name: 'cellfed_garbage_collected_total',
      help: 'What the garbage collector across cells did: deleted objects whose held owners are all gone, removed references to owners that went, orphaned the held dependents of owners deleted with orphan propagation',
      labelNames: ['action'],
      registers,
    });
    this.followers = new Counter({
      name: 'cellfed_rebalance_followers_total',
      help: 'Follower copies of ConfigMaps and Secrets that pod templates name, written into or deleted from the cells of the workloads, by action (created, updated, deleted)',
      labelNames: ['action'],
      registers,
    });
  }
}
