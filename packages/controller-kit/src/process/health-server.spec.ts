import { Counter, Registry } from 'prom-client';

import { HealthServer } from './health-server.ts';

describe('HealthServer', () => {
  const registry = new Registry();
  const server = new HealthServer(registry);
  let base = '';
  let synced = false;

  beforeAll(async () => {
    new Counter({ name: 'test_things_total', help: 'things', registers: [registry] }).inc(3);
    server.addHealthCheck('ping', () => true);
    server.addReadyCheck('informers-synced', () => synced || 'cell-a v1/configmaps not synced');
    server.addReadyCheck('leader-known', () => true);
    const address = await server.listen('127.0.0.1', 0);
    base = `http://127.0.0.1:${address.port}`;
  });

  afterAll(() => server.close());

  it('serves the injected registry on /metrics', async () => {
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('test_things_total 3');
  });

  it('answers /healthz ok', async () => {
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok\n');
  });

  it('answers /readyz 503 naming the failing check, then 200 once it passes', async () => {
    synced = false;
    const failing = await fetch(`${base}/readyz`);
    expect(failing.status).toBe(503);
    const text = await failing.text();
    expect(text).toContain('[-]informers-synced failed: cell-a v1/configmaps not synced');
    expect(text).toContain('[+]leader-known ok');
    synced = true;
    const passing = await fetch(`${base}/readyz?verbose`);
    expect(passing.status).toBe(200);
    expect(await passing.text()).toContain('[+]informers-synced ok');
  });

  it('answers 404 elsewhere and 405 to writes', async () => {
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/readyz`, { method: 'POST' })).status).toBe(405);
  });
});
