import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

import { counter, gauge, histogram, QUEUE_BUCKETS } from '../metrics/registry-metrics.ts';
import type { Lane } from './lane.ts';

/** What a queue reports when scraped: work started but not done. */
export interface InFlightReport {
  unfinishedWorkSeconds(): number;
  longestRunningProcessorSeconds(): number;
}

/**
 * One queue's metrics, named as client-go's workqueue metrics so existing dashboards work. Depth carries a
 * `priority` label (urgent, high, low), as controller-runtime's priority queue does.
 */
export class QueueMetrics {
  readonly depth: Record<Lane, Gauge.Internal<'name' | 'priority'>>;
  readonly adds: Counter.Internal;
  readonly queueDuration: Histogram.Internal<'name'>;
  readonly workDuration: Histogram.Internal<'name'>;
  readonly retries: Counter.Internal;

  constructor(registry: Registry, name: string, inFlight: InFlightReport) {
    const reports = inFlightReports(registry);
    reports.set(name, inFlight);
    const collectFrom = (read: (report: InFlightReport) => number) =>
      function (this: Gauge<'name'>) {
        for (const [queue, report] of reports) this.set({ name: queue }, read(report));
      };
    const depth = gauge(registry, 'workqueue_depth', 'Current depth of workqueue', ['name', 'priority']);
    this.depth = {
      urgent: depth.labels({ name, priority: 'urgent' }),
      high: depth.labels({ name, priority: 'high' }),
      low: depth.labels({ name, priority: 'low' }),
    };
    for (const lane of Object.values(this.depth)) lane.set(0);
    this.adds = counter(registry, 'workqueue_adds_total', 'Total number of adds handled by workqueue', [
      'name',
    ]).labels({ name });
    this.adds.inc(0);
    this.queueDuration = histogram(
      registry,
      'workqueue_queue_duration_seconds',
      'How long in seconds an item stays in workqueue before being requested',
      ['name'],
      QUEUE_BUCKETS,
    ).labels({ name });
    this.workDuration = histogram(
      registry,
      'workqueue_work_duration_seconds',
      'How long in seconds processing an item from workqueue takes',
      ['name'],
      QUEUE_BUCKETS,
    ).labels({ name });
    this.retries = counter(
      registry,
      'workqueue_retries_total',
      'Total number of retries handled by workqueue',
      ['name'],
    ).labels({ name });
    this.retries.inc(0);
    gauge(
      registry,
      'workqueue_unfinished_work_seconds',
      'How many seconds of work has been done that is in progress and has not been observed by work_duration',
      ['name'],
      collectFrom((report) => report.unfinishedWorkSeconds()),
    );
    gauge(
      registry,
      'workqueue_longest_running_processor_seconds',
      'How many seconds has the longest running processor for workqueue been running',
      ['name'],
      collectFrom((report) => report.longestRunningProcessorSeconds()),
    );
  }
}

const reportsByRegistry = new WeakMap<Registry, Map<string, InFlightReport>>();

function inFlightReports(registry: Registry): Map<string, InFlightReport> {
  let reports = reportsByRegistry.get(registry);
  if (!reports) {
    reports = new Map();
    reportsByRegistry.set(registry, reports);
  }
  return reports;
}
