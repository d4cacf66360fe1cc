import { KubeClient, type KubeList, type KubeObject } from '@cellfed/controller-kit';
import { RoutingTable, parseCellSetSpec } from '@cellfed/hashing';

import { cellSetSpec, eventually } from './clients.ts';
import { DEPLOYMENTS, deployment } from './deployments.ts';
import { describeE2e, e2eEnv } from './e2e-env.ts';
import {
  startRebalancedFederation,
  stopRebalancedFederation,
  type RebalancedFederation,
} from './scratch-federation.ts';

/** What a cell's own controllers need from the control plane to run a workload routed to that cell. */
describeE2e('workloads in cells: what their pods need from the control plane is there', () => {
  const env = e2eEnv();
  const [one, two] = env.cells.map((cell) => cell.id) as [string, string];
  const cellSetName = `workloads-${Date.now()}`;
  const namespace = `workloads-${Date.now()}`;
  const spec = cellSetSpec({ [one]: 'Normal', [two]: 'Normal' });
  const table = RoutingTable.fromCellSet(parseCellSetSpec(spec));
  const plain = KubeClient.fromFile(env.controlPlane.kubeconfig);
  const cells = new Map(env.cells.map((cell) => [cell.id, KubeClient.fromFile(cell.kubeconfig)]));
  let started: RebalancedFederation | undefined;

  beforeAll(async () => {
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
});
