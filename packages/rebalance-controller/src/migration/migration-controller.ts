import {
  Controller,
  TokenBucket,
  type CellObjects,
  type CellPool,
  type ControlPlaneNamespaces,
  type QuotaDraw,
} from '@cellfed/controller-kit';
import {
  OBJECT_KEYS,
  formatObjectKey,
  objectKeyOf,
  parseObjectKey,
  type ObjectKey,
} from '@cellfed/federation';

import { PlannedObjects } from '../planned-objects.ts';
import type { CellLookup } from '../cell-end.ts';
import type { LeadingController, RunnerSettings } from '../leading-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import type { RebalanceMetrics } from '../rebalance-metrics.ts';
import { FenceWindow } from './fence-window.ts';
import { MigrationReconciler } from './migration-reconciler.ts';
import { needsWork } from './needs-work.ts';
import { ObjectMover } from './object-mover.ts';
import { StatusSubresources } from './status-subresources.ts';

export interface MigrationSettings {
  /** Objects moved at once at most (the workers). */
  window: number;
  /** The fence time the number of moves at once adapts to stay under (fence-window.ts). */
  fenceTargetMs: number;
  /** Moves started per second at most; unlimited when absent. */
  ratePerSecond?: number | undefined;
  /** How long an old copy stays after its move. */
  deleteAfterMs: number;
  /** Objects taken from the low-priority lane (scans) per second. */
  scanQps: number;
}

export interface MigrationControllerOptions {
  pool: CellPool;
  plans: PlanHolder;
  objects: CellObjects;
  namespaces: ControlPlaneNamespaces;
  cell: CellLookup;
  /** Draws quota share into a cell whose quota refuses a move; none when quotas are not divided. */
  quota?: QuotaDraw;
  /** Told the namespace of a move its new cell's quota refused even after a draw. */
  onQuotaRefused?: (namespace: string) => void;
  settings: MigrationSettings;
  metrics: RebalanceMetrics;
  runner: RunnerSettings;
}

/**
 * The migrations (keyed by object, `window` workers). A copy's change always queues its object; the first
 * lists and resyncs only queue objects with something to do ({@link needsWork}), so the scan's rate limit
 * is spent on moves. A namespace whose labels change queues its objects (its shard-by label decides their
 * keys); on taking the lead, and when the CellSet's gate opens, every object with something to do is queued.
 */
export class MigrationController implements LeadingController {
  private readonly controller: Controller<ObjectKey>;
  private readonly plans: PlanHolder;
  private readonly objects: CellObjects;
  private readonly namespaceLabels: (namespace: string) => Record<string, string> | undefined;

  constructor(options: MigrationControllerOptions) {
    const { pool, plans, objects, namespaces, settings, runner } = options;
    this.plans = plans;
    this.objects = objects;
    this.namespaceLabels = (namespace) => namespaces.labels(namespace);
    const statusSubresources = new StatusSubresources();
    const { ratePerSecond } = settings;
    this.controller = new Controller({
      ...runner,
      name: 'migrations',
      reconciler: new PlannedObjects(
        plans,
        new MigrationReconciler({
          plans,
          copies: objects,
          cell: options.cell,
          namespaceLabels: this.namespaceLabels,
          mover: new ObjectMover({
            clock: runner.clock,
            statusSubresources,
            ...(options.quota ? { quota: options.quota } : {}),
            ...(options.onQuotaRefused ? { onQuotaRefused: options.onQuotaRefused } : {}),
          }),
          metrics: options.metrics,
          clock: runner.clock,
          deleteAfterMs: settings.deleteAfterMs,
          fences: new FenceWindow({
            max: settings.window,
            targetMs: settings.fenceTargetMs,
            wake: (key) => this.controller.queue.add(key, 'high'),
            onSize: (size) => options.metrics.fenceWindow.set(size),
          }),
          ...(ratePerSecond
            ? { rate: new TokenBucket(ratePerSecond, Math.max(1, ratePerSecond), runner.clock.now()) }
            : {}),
        }),
      ),
      workers: settings.window,
      lowLane: { qps: settings.scanQps, burst: Math.max(settings.window * 4, 100) },
      backoff: { baseMs: 200, maxMs: 30_000 },
      keys: OBJECT_KEYS,
    });
    objects.addHandler((key, lane) => {
      if (lane === 'high' || this.keyNeedsWork(key)) this.controller.queue.add(key, lane);
    });
    namespaces.onChange(({ type, name }) => {
      if (type === 'modified') this.enqueueNamespace(name);
    });
    pool.subscribe({ engage: (cell) => statusSubresources.forget(cell.id) });
  }

  /**
   * Puts in the low lane every object with something to do under the current plan: bound for another cell,
   * or a copy with migration marks or outside its cell. The rest (most objects, most of the time) are not
   * queued at all.
   */
  enqueueAll(): void {
    const plan = this.plans.current();
    if (!plan) return;
    const keys = new Set<string>();
    this.objects.eachCopy((cell, ref, metadata) => {
      if (needsWork(plan, cell, ref, metadata, this.namespaceLabels)) keys.add(formatObjectKey(ref));
    });
    for (const key of keys) this.controller.queue.add(key, 'low');
  }

  start(): void {
    this.enqueueAll();
    this.controller.start();
  }

  stop(): Promise<boolean> {
    return this.controller.stop(10_000);
  }

  private keyNeedsWork(key: string): boolean {
    const plan = this.plans.current();
    const ref = plan && parseObjectKey(key, plan.resources);
    if (!plan || !ref) return false;
    for (const [cell, metadata] of this.objects.copiesOf(ref))
      if (needsWork(plan, cell, ref, metadata, this.namespaceLabels)) return true;
    return false;
  }

  private enqueueNamespace(namespace: string): void {
    this.objects.eachCopy((_cell, ref) => {
      if (ref.namespace === namespace) this.controller.enqueue(objectKeyOf(ref), 'high');
    });
  }
}
