import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

import { counter, gauge, histogram, RECONCILE_BUCKETS } from '../metrics/registry-metrics.ts';

const RECONCILE_RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const;
export type ReconcileOutcome = (typeof RECONCILE_RESULTS)[number];

/** One controller's metrics, named as controller-runtime's; every series exists from the start at zero. */
export class ReconcileMetrics {
  readonly total: Record<ReconcileOutcome, Counter.Internal>;
  readonly errors: Counter.Internal;
  readonly terminalErrors: Counter.Internal;
  readonly timeouts: Counter.Internal;
  readonly duration: Histogram.Internal<'controller'>;
  readonly activeWorkers: Gauge.Internal<'controller'>;

  constructor(registry: Registry, controller: string, workers: number) {
    const total = counter(
      registry,
      'controller_runtime_reconcile_total',
      'Total number of reconciliations per controller',
      ['controller', 'result'],
    );
    this.total = Object.fromEntries(
      RECONCILE_RESULTS.map((result) => [result, total.labels({ controller, result })]),
    ) as Record<ReconcileOutcome, Counter.Internal>;
    const zeroed = (metric: Counter<'controller'>) => {
      const child = metric.labels({ controller });
      child.inc(0);
      return child;
    };
    Object.values(this.total).forEach((child) => child.inc(0));
    this.errors = zeroed(
      counter(
        registry,
        'controller_runtime_reconcile_errors_total',
        'Total number of reconciliation errors per controller',
        ['controller'],
      ),
    );
    this.terminalErrors = zeroed(
      counter(
        registry,
        'controller_runtime_terminal_reconcile_errors_total',
        'Total number of terminal reconciliation errors per controller',
        ['controller'],
      ),
    );
    this.timeouts = zeroed(
      counter(
        registry,
        'cellfed_reconcile_timeouts_total',
        'Reconciles aborted by the per-reconcile timeout',
        ['controller'],
      ),
    );
    this.duration = histogram(
      registry,
      'controller_runtime_reconcile_time_seconds',
      'Length of time per reconciliation per controller',
      ['controller'],
      RECONCILE_BUCKETS,
    ).labels({ controller });
    this.activeWorkers = gauge(
      registry,
      'controller_runtime_active_workers',
      'Number of currently used workers per controller',
      ['controller'],
    ).labels({ controller });
    this.activeWorkers.set(0);
    gauge(
      registry,
      'controller_runtime_max_concurrent_reconciles',
      'Maximum number of concurrent reconciles per controller',
      ['controller'],
    ).set({ controller }, workers);
  }
}
