import { parseCellSetSpec } from '@cellfed/api';
import { join } from 'node:path';

import { installCellRbac, installControlPlaneRbac } from '@cellfed/cells/chart/component-rbac.ts';
import { KubeClient } from '@cellfed/controller-kit';
import { RoutingTable } from '@cellfed/hashing';
import { type KubeList, type KubeObject } from '@cellfed/federation';

import { cellSetSpec, eventually } from '../helpers/clients.ts';
import { DEPLOYMENTS, deployment } from '../helpers/deployments.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import {
  startRebalancedFederation,
  stopRebalancedFederation,
  type RebalancedFederation,
} from '../helpers/scratch-federation.ts';

/** What a cell's own controllers need from the control plane to run a workload routed to that cell. */
describeE2e('workloads in cells: what their pods need from the control plane is there', () => {
  const env = e2eEnv();
  const [one, two] = env.cells.map((cell) => cell.id) as [string, string];
  const cellSetName = `workloads-${Date.now()}`;
  const namespace = `workloads-${Date.now()}`;
  // Secrets shared (opt-in): a pod in either cell may mount one the control plane has.
  const spec = {
    ...cellSetSpec({ [one]: 'Normal', [two]: 'Normal' }),
    sharedResources: [{ group: '', version: 'v1', resource: 'secrets' }],
  };
  const table = RoutingTable.fromCellSet(parseCellSetSpec(spec));
  const plain = KubeClient.fromFile(env.controlPlane.kubeconfig);
  const cells = new Map(env.cells.map((cell) => [cell.id, KubeClient.fromFile(cell.kubeconfig)]));
  let started: RebalancedFederation | undefined;

  beforeAll(async () => {
    // Both charts installed as for this CellSet too (their values say so): the rebalance controller may read
    // the control plane's Secrets and mirror them into the cells.
    const helm = join(process.env['CELLFED_TOOLS_BIN']!, 'helm');
    await installControlPlaneRbac(env.controlPlane.kubeconfig, helm, {
      sharedResourceRules: [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'],
          verbs: ['get', 'list', 'watch'],
        },
        { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
      ],
    });
    for (const cell of env.cells)
      await installCellRbac(cell.kubeconfig, helm, {
        sharedResources: [
          { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
          { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' },
          { group: '', resource: 'secrets' },
        ],
      });
    // The default resync (60 s): a ServiceAccount must reach the cells because it changed, not on a timer.
    started = await startRebalancedFederation(env, {
      cellSetName,
      spec,
      namespace,
      deployments: [],
      cells: [one, two],
    });
  });

  afterAll(async () => {
    await stopRebalancedFederation(env, started, { cellSetName, namespace });
    for (const client of [plain, ...cells.values()]) await client.close();
    // The charts' RBAC as the environment has it (the defaults), for the suites after this one: with this
    // suite's values, a CellSet sharing the default resources could not mirror them.
    const helm = join(process.env['CELLFED_TOOLS_BIN']!, 'helm');
    await installControlPlaneRbac(env.controlPlane.kubeconfig, helm);
    for (const cell of env.cells) await installCellRbac(cell.kubeconfig, helm);
  });

  it('a Deployment running as a ServiceAccount created just before gets its pods in its cell, as on one apiserver', async () => {
    const podsOf = (client: KubeClient, app: string) =>
      client.request<KubeList>('GET', `/api/v1/namespaces/${namespace}/pods`, {
        query: { labelSelector: `app=${app}` },
      });
    const withAccount = (name: string) => {
      const object = deployment(name) as ReturnType<typeof deployment> & {
        spec: { template: { spec: Record<string, unknown> } };
      };
      object.spec.replicas = 1;
      object.spec.template.spec.serviceAccountName = 'builder';
      return object;
    };
    // ServiceAccounts are not cellular: through the router this is the control plane's, which one
    // apiserver's Deployment below runs as too.
    await started!.federation.routed.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder' } },
    });
    for (const client of [started!.federation.routed, plain])
      await client.request<KubeObject>('POST', `${DEPLOYMENTS}/namespaces/${namespace}/deployments`, {
        body: withAccount('runner'),
      });
    const cell = cells.get(table.route(table.keyOf({ namespace, name: 'runner' })).oldCell)!;
    for (const [where, client] of [
      ['one apiserver', plain],
      ['its cell', cell],
    ] as const)
      await eventually(
        `a pod of the Deployment running as builder in ${where}`,
        async () => ((await podsOf(client, 'runner')).items.length > 0 ? true : undefined),
        30_000,
      );
    const pod = (await podsOf(cell, 'runner')).items[0] as KubeObject & {
      spec: { serviceAccountName?: string };
    };
    expect(pod.spec.serviceAccountName).toBe('builder');
  });

  it('a shared Secret reaches every cell at once, changes and goes with the control plane’s; tokens and helm records stay out', async () => {
    const routed = started!.federation.routed;
    const secrets = `/api/v1/namespaces/${namespace}/secrets`;
    const secret = (name: string, type: string, value: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name },
      type,
      stringData: { value },
    });
    // Secrets are not cellular: through the router this is the control plane's.
    await routed.request('POST', secrets, { body: secret('db-password', 'Opaque', 'first') });
    await routed.request('POST', secrets, {
      body: secret('sh.helm.release.v1.app.v1', 'helm.sh/release.v1', 'x'),
    });
    const valueIn = async (client: KubeClient, name: string) => {
      const found = await client
        .request<KubeObject & { data?: Record<string, string> }>('GET', `${secrets}/${name}`)
        .catch(() => undefined);
      return found ? Buffer.from(found.data?.['value'] ?? '', 'base64').toString() : undefined;
    };
    // Well within the mirror's 60 s resync: the change itself starts the pass.
    const inEveryCell = (name: string, wanted: string | undefined) =>
      eventually(
        `${name} to be ${wanted ?? 'gone'} in every cell`,
        async () => {
          for (const id of [one, two]) if ((await valueIn(cells.get(id)!, name)) !== wanted) return undefined;
          return true;
        },
        20_000,
      );
    await inEveryCell('db-password', 'first');
    await routed.request('PATCH', `${secrets}/db-password`, {
      body: { stringData: { value: 'second' } },
      contentType: 'application/merge-patch+json',
    });
    await inEveryCell('db-password', 'second');
    await routed.request('DELETE', `${secrets}/db-password`);
    await inEveryCell('db-password', undefined);
    for (const id of [one, two])
      expect(await valueIn(cells.get(id)!, 'sh.helm.release.v1.app.v1')).toBeUndefined();
  });
});
