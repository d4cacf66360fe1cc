import { parseCellSet } from '@cellfed/api';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { KubeClient } from '@cellfed/controller-kit';
import { RoutingTable } from '@cellfed/hashing';

import { createLogger } from '@cellfed/cells/log.ts';
import type { CellEntry } from '@cellfed/cells/provider.ts';
import { cellSetSpec, createCellSet, deleteCellSet, eventually, readCellSet } from '../helpers/clients.ts';
import {
  startBackupController,
  startRebalanceController,
  stopController,
  type ControllerProcess,
} from '../helpers/controller-process.ts';
import { cellAdder, describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import { startOtlpCollector } from '../helpers/otlp-collector.ts';
import { startOtlpGrpcCollector } from '../helpers/otlp-grpc-collector.ts';
import {
  kubectl,
  routerKubeconfig,
  startRouter,
  stopRouter,
  type RouterProcess,
} from '../helpers/router-process.ts';

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

describeE2e('traces: a cell apiserver continues the router’s trace', () => {
  const env = e2eEnv();
  const { provider, runnable } = cellAdder(env);
  const log = createLogger({ level: 'warn' });
  const cellSetName = `traced-cell-${Date.now()}`;
  const namespace = cellSetName;
  let routerCollector: Awaited<ReturnType<typeof startOtlpCollector>> | undefined;
  let cellCollector: Awaited<ReturnType<typeof startOtlpGrpcCollector>> | undefined;
  let added: CellEntry | undefined;
  let router: RouterProcess | undefined;
  let routed: KubeClient | undefined;

  afterAll(async () => {
    await routed?.close();
    await stopRouter(router);
    await deleteCellSet(env.controlPlane.kubeconfig, cellSetName);
    if (added) await provider.removeCell({ dir: env.dir, id: added.id, log });
    await routerCollector?.close();
    await cellCollector?.close();
  });

  runnable(
    'the span of a create in the cell is a child of the router’s span for it',
    async () => {
      routerCollector = await startOtlpCollector();
      cellCollector = await startOtlpGrpcCollector();
      // Sampling 0: the apiserver records only what a sampled caller (the router) passes on.
      const tracingConfig = join(env.dir, `${cellSetName}-tracing.yaml`);
      writeFileSync(
        tracingConfig,
        [
          'apiVersion: apiserver.config.k8s.io/v1',
          'kind: TracingConfiguration',
          `endpoint: ${cellCollector.endpoint}`,
          'samplingRatePerMillion: 0',
        ].join('\n'),
      );
      added = await provider.addCell({
        dir: env.dir,
        controllerManager: false,
        apiserverArgs: [`--tracing-config-file=${tracingConfig}`],
        log,
      });
      // A federation of this cell alone: the create goes to it.
      await createCellSet(env.controlPlane.kubeconfig, cellSetName, cellSetSpec({ [added.id]: 'Normal' }));
      router = await startRouter(env, {
        args: ['--cellset', cellSetName, '--otlp-endpoint', routerCollector.url],
        cells: [added.id],
      });
      routed = KubeClient.fromFile(routerKubeconfig(env, router, join(env.dir, `${cellSetName}.kubeconfig`)));
      await routed.request('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
      });
      await routed.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'traced' } },
      });

      // Both export in batches (5 s).
      const routerSpan = await eventually(
        'the router’s span of the create',
        async () =>
          routerCollector!.spans.find(
            (one) =>
              one.attributes['k8s.verb'] === 'create' && one.attributes['k8s.object.name'] === 'traced',
          ),
        30_000,
      );
      expect(routerSpan.attributes['cellfed.cell']).toBe(added.id);
      const cellSpan = await eventually(
        'the cell apiserver’s span in the same trace',
        async () =>
          cellCollector!.spans.find(
            (one) => one.traceId === routerSpan.traceId && one.parentSpanId === routerSpan.spanId,
          ),
        30_000,
      );
      expect(cellSpan).toMatchObject({
        service: 'apiserver',
        attributes: { 'http.target': `/api/v1/namespaces/${namespace}/configmaps` },
      });
    },
    120_000,
  );
});
