import type { Registry } from 'prom-client';

/** The value of the first series of `name` whose labels include `labels`; undefined if there is none. */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return undefined;
  const values = (await metric.get()).values;
  return values.find((value) =>
    Object.entries(labels).every(([label, wanted]) => value.labels[label] === wanted),
  )?.value;
}
