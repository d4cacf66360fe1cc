import { Registry } from 'prom-client';

import { RouterMetrics } from './router-metrics.ts';

describe('RouterMetrics', () => {
  const record = (metrics: RouterMetrics, verb: string, resource: string, code: number) =>
    metrics.record({ verb, resource, cell: 'cell-1', code, routeCase: '', fenced: false, seconds: 0.01 });

  it('keeps every label bounded whatever callers send: made-up verbs and resources are other', async () => {
    const registry = new Registry();
    const metrics = new RouterMetrics(registry);
    for (let i = 0; i < 5_000; i++) record(metrics, `verb${i}`, `apps/made-up-${i}`, 404);
    record(metrics, 'get', 'apps/deployments', 200);
    record(metrics, 'get', 'apps/deployments', 403);
    const series = (await registry.getSingleMetric('cellfed_router_requests_total')!.get()).values;
    expect(series.map((one) => one.labels)).toEqual([
      { verb: 'other', resource: 'other', cell: 'cell-1', code: '404' },
      { verb: 'get', resource: 'apps/deployments', cell: 'cell-1', code: '200' },
      { verb: 'get', resource: 'apps/deployments', cell: 'cell-1', code: '403' },
    ]);
  });
});
