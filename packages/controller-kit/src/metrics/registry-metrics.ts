import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

// Several queues, controllers or cell pools share one metric name and differ by label; the first to ask
// creates the metric on the injected registry and the rest reuse it (prom-client rejects duplicates).

export function counter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Counter<L> {
  return (
    (registry.getSingleMetric(name) as Counter<L> | undefined) ??
    new Counter({ name, help, labelNames, registers: [registry] })
  );
}

export function gauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  collect?: (this: Gauge<L>) => void,
): Gauge<L> {
  const existing = registry.getSingleMetric(name) as Gauge<L> | undefined;
  if (existing) return existing;
  return collect
    ? new Gauge({ name, help, labelNames, registers: [registry], collect })
    : new Gauge({ name, help, labelNames, registers: [registry] });
}

export function histogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: number[],
): Histogram<L> {
  return (
    (registry.getSingleMetric(name) as Histogram<L> | undefined) ??
    new Histogram({ name, help, labelNames, buckets, registers: [registry] })
  );
}

/** client-go's workqueue buckets: 10 ns to 10 s, ×10 each. */
export const QUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

/** controller-runtime's reconcile-time buckets. */
export const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
