import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { RoutingTable, parseCellSet } from '@cellfed/hashing';

import { eventually, readCellSet } from './clients.ts';
import {
  startBackupController,
  startRebalanceController,
  stopController,
  type ControllerProcess,
} from './controller-process.ts';
import { describeE2e, e2eEnv } from './e2e-env.ts';
import { startOtlpCollector } from './otlp-collector.ts';
import { kubectl, routerKubeconfig, startRouter, stopRouter, type RouterProcess } from './router-process.ts';

describeE2e('traces: the router and the controllers export spans over OTLP', () => {
  const env = e2eEnv();
  const namespace = `traces-${Date.now()}`;
  let collector: Awaited<ReturnType<typeof startOtlpCollector>>;
  let router: RouterProcess | undefined;
  let rebalance: ControllerProcess | undefined;
  let backup: ControllerProcess | undefined;
  let kubeconfig = '';

  beforeAll(async () => {
    collector = await startOtlpCollector();
    router = await startRouter(env, { args: ['--otlp-endpoint', collector.url] });
    kubeconfig = routerKubeconfig(env, router, join(tmpdir(), `${namespace}.kubeconfig`));
    expect((await kubectl(kubeconfig, ['create', 'namespace', namespace])).code).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await kubectl(kubeconfig, ['delete', 'namespace', namespace, '--wait=false']);
    await Promise.all([stopController(rebalance), stopController(backup)]);
    await stopRouter(router);
    await collector.close();
  });

  it('a request through the router is a span naming the object and the cell the ring names', async () => {
    const created = await kubectl(kubeconfig, ['-n', namespace, 'create', 'configmap', 'traced']);
    expect(created.out).toContain('configmap/traced created');
    const table = RoutingTable.fromCellSet(
      parseCellSet(await readCellSet(env.controlPlane.kubeconfig, env.cellSet)).spec,
    );
    const cell = table.route(table.keyOf({ namespace, name: 'traced' })).oldCell;
    // The router batches spans (5 s).
    const span = await eventually(
      'the span of the create',
      async () =>
        collector.spans.find(
          (one) => one.attributes['k8s.object.name'] === 'traced' && one.attributes['k8s.verb'] === 'create',
        ),
      20_000,
    );
    expect(span).toMatchObject({
      service: 'cell-router',
      name: 'create configmaps',
      attributes: {
        'cellfed.cell': cell,
        'k8s.namespace.name': namespace,
        'http.response.status_code': 201,
        'enduser.id': 'admin',
      },
    });
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
  }, 30_000);

  it('both controllers export a span per reconcile', async () => {
    const args = ['--otlp-endpoint', collector.url, '--cellset', env.cellSet];
    [rebalance, backup] = await Promise.all([
      startRebalanceController(env, { args }),
      startBackupController(env, { args }),
    ]);
    const spanOf = (service: string, name: string, key: (key: string) => boolean) =>
      eventually(
        `a span "${name}" from the ${service}`,
        async () =>
          collector.spans.find(
            (one) =>
              one.service === service && one.name === name && key(String(one.attributes['cellfed.key'])),
          ),
        30_000,
      );
    const [cellSet, object] = await Promise.all([
      spanOf('rebalance-controller', 'reconcile cellset', (key) => key === env.cellSet),
      spanOf('backup-controller', 'reconcile backups', (key) => key.endsWith(`/${namespace}/traced`)),
    ]);
    expect(cellSet.attributes).toMatchObject({
      'cellfed.controller': 'cellset',
      'cellfed.outcome': expect.stringMatching(/^(success|requeue|requeue_after)$/),
    });
    expect(object.attributes).toMatchObject({
      'cellfed.controller': 'backups',
      'cellfed.lane': expect.any(String),
    });
  }, 60_000);
});
