import { readFileSync } from 'node:fs';

import {
  CELLS_FINALIZER,
  FOLLOWER_LABEL,
  MIRRORED_LABEL,
  NAMESPACE_UID_ANNOTATION,
  QUOTA_SHARE_ANNOTATION,
  parseCellSetSpec,
} from '@cellfed/api';
import { ApiError, KubeClient } from '@cellfed/controller-kit';
import { RoutingTable } from '@cellfed/hashing';
import { MARKS_POLICY_NAME, type KubeList, type KubeObject, parseQuantity } from '@cellfed/federation';
import { serviceAccountToken } from '@cellfed/cells/control-plane/service-account-token.ts';

import { cellSetSpec, eventually, newServiceAccountToken } from '../helpers/clients.ts';
import { DEPLOYMENTS, deployment } from '../helpers/deployments.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import { pickName } from '../helpers/join-fixture.ts';
import {
  startRebalancedFederation,
  stopRebalancedFederation,
  type RebalancedFederation,
} from '../helpers/scratch-federation.ts';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';

/** Whether an IPv4 address is in an IPv4 CIDR (the service ranges here are IPv4). */
function inCidr(address: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return (ipv4(address) & mask) >>> 0 === (ipv4(base!) & mask) >>> 0;
}

function overlaps(a: string, b: string): boolean {
  return inCidr(a.split('/')[0]!, b) || inCidr(b.split('/')[0]!, a);
}

function ipv4(address: string): number {
  return address.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
}

interface Pod extends KubeObject {
  spec: {
    priority?: number;
    priorityClassName?: string;
    runtimeClassName?: string;
    containers: { resources?: { limits?: Record<string, string> } }[];
  };
}

/**
 * What governs a workload is stored in the router control plane, while the workload lives in a cell whose
 * apiserver, controllers and admission read only their own store. A CellSet with the default
 * `sharedResources` mirrors those objects into every cell (docs/governance.md). These tests write them
 * through the router, as a user does, and show each one in force in the cell that holds the workload:
 * RBAC for a ServiceAccount's token, the PriorityClass, RuntimeClass and LimitRange its pods need, a
 * PodDisruptionBudget the eviction API honours, admission policies that refuse or mutate a Deployment, and
 * NetworkPolicies and webhook configurations present in every cell. Each of these failed on a CellSet that
 * shared RBAC only.
 */
describeE2e('what governs a workload is in force in its cell', () => {
  const env = e2eEnv();
  const suffix = Date.now().toString(36);
  const cellSetName = `governance-${suffix}`;
  const namespace = `governance-${suffix}`;
  const ids = env.cells.slice(0, 2).map((cell) => cell.id);
  const cells = new Map(env.cells.map((cell) => [cell.id, KubeClient.fromFile(cell.kubeconfig)]));
  const inCells = ids.map((id) => cells.get(id)!);
  // No sharedResources: the defaults.
  const spec = cellSetSpec(Object.fromEntries(ids.map((id) => [id, 'Normal' as const])));
  let started: RebalancedFederation | undefined;
  let routed: KubeClient;
  /** Cluster-scoped objects the tests made through the router, deleted after. */
  const clusterScoped: string[] = [];

  const inNamespace = (resource: string, name = '') =>
    `/api/v1/namespaces/${namespace}/${resource}${name ? `/${name}` : ''}`;
  const deploymentsPath = (name = '') =>
    `${DEPLOYMENTS}/namespaces/${namespace}/deployments${name ? `/${name}` : ''}`;
  const found = (client: KubeClient, path: string) =>
    client.request<KubeObject>('GET', path).catch((error: unknown) => {
      if (error instanceof ApiError && error.statusCode === 404) return undefined;
      throw error;
    });
  /** A client of the apiserver `kubeconfigFile` names (or of `server`) with `token` instead of its admin's. */
  const withToken = (kubeconfigFile: string, token: string, server?: string) => {
    const config = JSON.parse(readFileSync(kubeconfigFile, 'utf8')) as {
      clusters: { cluster: { server: string } }[];
      users: { user: Record<string, unknown> }[];
    };
    if (server) config.clusters.forEach((cluster) => (cluster.cluster.server = server));
    config.users.forEach((user) => (user.user = { token }));
    return KubeClient.fromKubeconfig(JSON.stringify(config));
  };
  /** A client of the router with `token` (the router's certificate is the control plane CA's). */
  const throughRouter = (token: string) =>
    withToken(env.controlPlane.kubeconfig, token, started!.federation.router.url);
  /** Waits until every cell of the federation holds the mirrored copy of `path`. */
  const mirroredEverywhere = (path: string) =>
    eventually(`${path} mirrored into ${ids.join(', ')}`, async () => {
      const copies = await Promise.all(inCells.map((cell) => found(cell, path)));
      return copies.every((copy) => copy?.metadata.labels?.[MIRRORED_LABEL]) ? copies : undefined;
    });
  const createClusterScoped = async (collection: string, object: KubeObject) => {
    await routed.request('POST', collection, { body: object });
    clusterScoped.push(`${collection}/${object.metadata.name}`);
  };
  const podsOf = async (app: string) =>
    (
      await routed.request<KubeList<Pod>>('GET', inNamespace('pods'), {
        query: { labelSelector: `app=${app}` },
      })
    ).items;
  const table = RoutingTable.fromCellSet(parseCellSetSpec(spec));
  /** The cell the routing rule puts a namespaced object of this suite in. */
  const cellOf = (name: string) => table.route(table.keyOf({ namespace, name })).oldCell!;
  const refusal = async (request: Promise<unknown>) => {
    const error = await request.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    if (!(error instanceof ApiError))
      throw new Error(`expected the request to be refused; got ${String(error)}`);
    return error;
  };

  beforeAll(async () => {
    started = await startRebalancedFederation(
      env,
      {
        cellSetName,
        spec,
        namespace,
        deployments: [],
        cells: ids,
        // Its quotas' status, counted through the router as the chart's quota controller counts it.
        quotaController: true,
      },
      ['--mirror-resync', '2s', '--finalize-namespaces', 'true'],
    );
    routed = started.federation.routed;
  });

  afterAll(async () => {
    for (const path of clusterScoped) await routed?.request('DELETE', path).catch(() => undefined);
    // The mirror takes its copies out of the cells before it stops.
    if (started)
      await eventually('the cluster-scoped copies gone from the cells', async () => {
        const left = await Promise.all(
          clusterScoped.flatMap((path) => inCells.map((cell) => found(cell, path))),
        );
        return left.every((copy) => copy === undefined) ? true : undefined;
      }).catch(() => undefined);
    await stopRebalancedFederation(env, started, { cellSetName, namespace });
    for (const client of cells.values()) await client.close();
  });

  it('lets a ServiceAccount do through the router, in every cell, what its Role allows and nothing more', async () => {
    const token = await newServiceAccountToken(env.controlPlane.kubeconfig, namespace, 'builder');
    await routed.request('POST', `${RBAC}/namespaces/${namespace}/roles`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'deployer' },
        rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'create'] }],
      },
    });
    await routed.request('POST', `${RBAC}/namespaces/${namespace}/rolebindings`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'builder-deploys' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
        subjects: [{ kind: 'ServiceAccount', name: 'builder', namespace }],
      },
    });
    const builder = throughRouter(token);
    try {
      // A list asks every cell as the ServiceAccount: each must hold the binding.
      const listed = await eventually('the builder to list Deployments in every cell', () =>
        builder.request<KubeList>('GET', deploymentsPath()).catch((error: unknown) => {
          if (error instanceof ApiError && error.statusCode === 403) return undefined;
          throw error;
        }),
      );
      expect(listed.items).toEqual([]);
      for (const name of ['built-a', 'built-b', 'built-c'])
        await builder.request('POST', deploymentsPath(), { body: deployment(name) });
      // Each in the cell the ring names, created there as the ServiceAccount.
      for (const name of ['built-a', 'built-b', 'built-c'])
        expect(await found(cells.get(cellOf(name))!, deploymentsPath(name))).toBeDefined();
      // What the Role does not grant stays refused, in a cell (delete) and in the control plane (Secrets).
      expect((await refusal(builder.request('DELETE', deploymentsPath('built-a')))).statusCode).toBe(403);
      expect((await refusal(builder.request('GET', inNamespace('secrets')))).statusCode).toBe(403);
    } finally {
      await builder.close();
    }
  });

  it('gives a workload’s pods in its cell the PriorityClass, RuntimeClass and LimitRange defaults they name', async () => {
    const priorityClass = `gold-${suffix}`;
    const runtimeClass = `sandboxed-${suffix}`;
    await createClusterScoped('/apis/scheduling.k8s.io/v1/priorityclasses', {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: priorityClass },
      value: 4242,
    } as KubeObject);
    await createClusterScoped('/apis/node.k8s.io/v1/runtimeclasses', {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: runtimeClass },
      handler: 'runc',
    } as KubeObject);
    await routed.request('POST', inNamespace('limitranges'), {
      body: {
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: 'defaults' },
        spec: { limits: [{ type: 'Container', default: { cpu: '300m', memory: '64Mi' } }] },
      },
    });
    await mirroredEverywhere(`/apis/scheduling.k8s.io/v1/priorityclasses/${priorityClass}`);
    await mirroredEverywhere(`/apis/node.k8s.io/v1/runtimeclasses/${runtimeClass}`);
    await mirroredEverywhere(inNamespace('limitranges', 'defaults'));

    const base = deployment('classy');
    await routed.request('POST', deploymentsPath(), {
      body: {
        ...base,
        spec: {
          ...base.spec,
          replicas: 2,
          template: {
            ...base.spec.template,
            spec: {
              ...base.spec.template.spec,
              priorityClassName: priorityClass,
              runtimeClassName: runtimeClass,
            },
          },
        },
      },
    });
    // The cell's ReplicaSet controller makes the pods; its admission refuses any naming a class it lacks.
    const pods = await eventually('the classy pods', async () => {
      const listed = await podsOf('classy');
      return listed.length === 2 ? listed : undefined;
    });
    for (const pod of pods) {
      expect(pod.spec.priority).toBe(4242);
      expect(pod.spec.runtimeClassName).toBe(runtimeClass);
      expect(pod.spec.containers[0]!.resources?.limits).toEqual({ cpu: '300m', memory: '64Mi' });
    }
  });

  it('gives every Service a ClusterIP no other cell can give, and each node port once in the federation', async () => {
    // Each cell allocates from its own range (docs/governance.md#allocations): read it where kube keeps it.
    const ranges = new Map<string, string[]>();
    for (const id of ids) {
      const cidr = await cells
        .get(id)!
        .request<KubeObject & { spec: { cidrs: string[] } }>(
          'GET',
          '/apis/networking.k8s.io/v1/servicecidrs/kubernetes',
        );
      ranges.set(id, cidr.spec.cidrs);
    }
    const [first, second] = ids.map((id) => ranges.get(id)!);
    expect(first!.some((cidr) => second!.some((other) => overlaps(cidr, other)))).toBe(false);

    const services = ids.flatMap((id) =>
      [0, 1, 2].map((n) => ({ id, name: pickName(`addressed-${n}`, (name) => cellOf(name) === id) })),
    );
    const service = (name: string, nodePort?: number): KubeObject =>
      ({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name },
        spec: {
          ...(nodePort ? { type: 'NodePort' } : {}),
          selector: { app: name },
          ports: [{ port: 80, ...(nodePort ? { nodePort } : {}) }],
        },
      }) as KubeObject;
    for (const { name } of services)
      await routed.request('POST', inNamespace('services'), { body: service(name) });
    const addresses = await Promise.all(
      services.map(async ({ id, name }) => {
        const made = await routed.request<KubeObject & { spec: { clusterIP: string } }>(
          'GET',
          inNamespace('services', name),
        );
        expect(ranges.get(id)!.some((cidr) => inCidr(made.spec.clusterIP, cidr))).toBe(true);
        return made.spec.clusterIP;
      }),
    );
    expect(new Set(addresses).size).toBe(services.length);

    // A node port is the federation's, as on one apiserver: taken twice is refused in one cell and across two
    // (the control plane's allocator holds them all: docs/routing.md#node-ports).
    const nodePort = 30000 + Math.floor(Math.random() * 2000);
    const [inFirst, againInFirst, inSecond] = [
      pickName('ported-a', (name) => cellOf(name) === ids[0]),
      pickName('ported-b', (name) => cellOf(name) === ids[0]),
      pickName('ported-c', (name) => cellOf(name) === ids[1]),
    ];
    await routed.request('POST', inNamespace('services'), { body: service(inFirst, nodePort) });
    for (const name of [againInFirst, inSecond]) {
      const collision = await refusal(
        routed.request('POST', inNamespace('services'), { body: service(name, nodePort) }),
      );
      expect(collision.statusCode).toBe(422);
      expect(collision.message).toContain(`${nodePort}: provided port is already allocated`);
    }
  });

  it('honours a PodDisruptionBudget made through the router when a pod in a cell is evicted, and shows its status as one apiserver would', async () => {
    const base = deployment('guarded');
    await routed.request('POST', deploymentsPath(), {
      body: { ...base, spec: { ...base.spec, replicas: 2 } },
    });
    await routed.request('POST', `/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets`, {
      body: {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'guarded' },
        spec: { minAvailable: 2, selector: { matchLabels: { app: 'guarded' } } },
      },
    });
    const pdbPath = `/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets/guarded`;
    const pods = await eventually('the guarded pods', async () => {
      const listed = await podsOf('guarded');
      return listed.length === 2 ? listed : undefined;
    });
    // Evicting a Pending pod disrupts nothing, so no budget guards it: report both running and ready in
    // their cell, as its kubelet would.
    const home = cells.get(cellOf('guarded'))!;
    for (const { metadata } of pods)
      await home.request('PATCH', `${inNamespace('pods', metadata.name)}/status`, {
        contentType: 'application/merge-patch+json',
        body: {
          status: {
            phase: 'Running',
            conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }],
          },
        },
      });
    // The pods' cell computes the budget over the pods it holds: both healthy, so none may go.
    await eventually('the budget computed in the pods’ cell', async () => {
      const copy = (await found(home, pdbPath)) as
        (KubeObject & { status?: { currentHealthy?: number; disruptionsAllowed?: number } }) | undefined;
      return copy?.metadata.labels?.[MIRRORED_LABEL] && copy.status?.currentHealthy === 2 ? true : undefined;
    });
    // Through the router the budget shows what one apiserver computes over the pods: the cells' counts, summed
    // (docs/governance.md#poddisruptionbudgets).
    const shown = await eventually('the budget’s status through the router', async () => {
      const budget = (await routed.request('GET', pdbPath)) as KubeObject & {
        status?: { expectedPods?: number; currentHealthy?: number; observedGeneration?: number };
      };
      return budget.status?.expectedPods === 2 && budget.status.currentHealthy === 2 ? budget : undefined;
    });
    expect(shown.status).toMatchObject({
      observedGeneration: shown.metadata.generation,
      desiredHealthy: 2,
      disruptionsAllowed: 0,
      conditions: [
        expect.objectContaining({ type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods' }),
      ],
    });
    const pod = pods[0]!.metadata.name!;
    const refused = await refusal(
      routed.request('POST', inNamespace('pods', `${pod}/eviction`), {
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace } },
      }),
    );
    expect(refused.statusCode).toBe(429);
    expect(refused.message).toContain('disruption budget');
    expect(await found(routed, inNamespace('pods', pod))).toBeDefined();
  });

  it('lets a HorizontalPodAutoscaler made through the router scale its Deployment in the Deployment’s cell, and shows its status', async () => {
    const base = deployment('autoscaled');
    await routed.request('POST', deploymentsPath(), {
      body: { ...base, spec: { ...base.spec, replicas: 1 } },
    });
    const autoscalerPath = `/apis/autoscaling/v2/namespaces/${namespace}/horizontalpodautoscalers/autoscaled`;
    await routed.request('POST', `/apis/autoscaling/v2/namespaces/${namespace}/horizontalpodautoscalers`, {
      body: {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'autoscaled' },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'autoscaled' },
          minReplicas: 3,
          maxReplicas: 5,
        },
      },
    });
    // Below its minimum the cell's autoscaler scales the target up without reading a metric (no kubelet or
    // metrics server here): the Deployment's replicas through the router are what the autoscaler set.
    await eventually('the Deployment scaled to the autoscaler’s minimum', async () => {
      const scaled = (await routed.request('GET', deploymentsPath('autoscaled'))) as KubeObject & {
        spec: { replicas: number };
      };
      return scaled.spec.replicas === 3 ? true : undefined;
    });
    const home = cellOf('autoscaled');
    const copy = await found(cells.get(home)!, autoscalerPath);
    expect(copy?.metadata.labels?.['cellfed.io/followed-from']).toBe('control-plane');
    for (const id of ids.filter((id) => id !== home))
      expect(await found(cells.get(id)!, autoscalerPath)).toBeUndefined();
    const shown = await eventually('the autoscaler’s status through the router', async () => {
      const autoscaler = (await routed.request('GET', autoscalerPath)) as KubeObject & {
        status?: {
          desiredReplicas?: number;
          conditions?: { type: string; status: string; reason: string }[];
        };
      };
      return autoscaler.status?.desiredReplicas === 3 ? autoscaler.status : undefined;
    });
    expect(shown.conditions).toContainEqual(expect.objectContaining({ type: 'AbleToScale', status: 'True' }));

    await routed.request('DELETE', autoscalerPath);
    await eventually('the autoscaler’s copy gone from its cell', async () =>
      (await found(cells.get(home)!, autoscalerPath)) ? undefined : true,
    );
  });

  it('puts a PersistentVolumeClaim made through the router in the cell whose pods mount it, and shows it bound there', async () => {
    const claimsPath = inNamespace('persistentvolumeclaims');
    await routed.request('POST', claimsPath, {
      body: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'stored' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
          storageClassName: '',
        },
      },
    });
    const base = deployment('stateful');
    await routed.request('POST', deploymentsPath(), {
      body: {
        ...base,
        spec: {
          ...base.spec,
          replicas: 1,
          template: {
            ...base.spec.template,
            spec: {
              ...base.spec.template.spec,
              volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'stored' } }],
            },
          },
        },
      },
    });
    const home = cellOf('stateful');
    const copy = await eventually('the claim in its pods’ cell', () =>
      found(cells.get(home)!, inNamespace('persistentvolumeclaims', 'stored')),
    );
    expect(copy.metadata.labels?.['cellfed.io/followed-from']).toBe('control-plane');
    for (const id of ids.filter((id) => id !== home))
      expect(await found(cells.get(id)!, inNamespace('persistentvolumeclaims', 'stored'))).toBeUndefined();
    // The cell's volume binder binds it to a volume of that cell (made here by hand: no provisioner).
    const volume = `stored-${suffix}`;
    await cells.get(home)!.request('POST', '/api/v1/persistentvolumes', {
      body: {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: volume },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          storageClassName: '',
          persistentVolumeReclaimPolicy: 'Retain',
          hostPath: { path: `/tmp/${volume}` },
          claimRef: { namespace, name: 'stored' },
        },
      },
    });
    try {
      const shown = await eventually('the claim bound, through the router', async () => {
        const claim = (await routed.request(
          'GET',
          inNamespace('persistentvolumeclaims', 'stored'),
        )) as KubeObject & {
          status?: { phase?: string; capacity?: Record<string, string> };
        };
        return claim.status?.phase === 'Bound' ? claim : undefined;
      });
      expect(shown.status?.capacity).toEqual({ storage: '1Gi' });

      // A claim outlives its pods; deleted through the router, it goes from its cell too.
      await routed.request('DELETE', deploymentsPath('stateful'));
      await routed.request('DELETE', inNamespace('persistentvolumeclaims', 'stored'));
      await eventually('the claim gone from its cell', async () =>
        (await found(cells.get(home)!, inNamespace('persistentvolumeclaims', 'stored'))) ? undefined : true,
      );
    } finally {
      await cells
        .get(home)!
        .request('DELETE', `/api/v1/persistentvolumes/${volume}`)
        .catch(() => undefined);
    }
  });

  it('refuses a client’s write of cellfed’s own marks, after authorization, and takes every other write', async () => {
    const marked = {
      ...deployment('self-followed'),
      metadata: { name: 'self-followed', labels: { 'cellfed.io/followed-from': 'control-plane' } },
    };
    // Left out of moves, backups and quotas, had it been taken.
    const invalid = await refusal(routed.request('POST', deploymentsPath(), { body: marked }));
    expect(invalid.statusCode).toBe(422);
    expect(invalid.message).toContain(
      'Deployment.apps "self-followed" is invalid: metadata.labels[cellfed.io/followed-from]: Forbidden',
    );
    expect(
      await found(cells.get(cellOf('self-followed'))!, deploymentsPath('self-followed')),
    ).toBeUndefined();

    await routed.request('POST', deploymentsPath(), { body: deployment('plain') });
    const patched = async (contentType: string, body: unknown) =>
      (await refusal(routed.request('PATCH', deploymentsPath('plain'), { contentType, body }))).statusCode;
    expect(
      await patched('application/merge-patch+json', {
        metadata: { labels: { 'cellfed.io/rebalance-status': 'migrated' } },
      }),
    ).toBe(422);
    expect(
      await patched('application/json-patch+json', [
        { op: 'add', path: '/metadata/annotations', value: { 'cellfed.io/uid': 'spoofed' } },
      ]),
    ).toBe(422);
    // A read-modify-write carries no mark, and a client's own labels go through (read again on a conflict,
    // as clients do: the cell's controller writes the new Deployment's status meanwhile).
    await eventually('a read-modify-write of the Deployment', async () => {
      const current = await routed.request<KubeObject>('GET', deploymentsPath('plain'));
      return routed
        .request('PUT', deploymentsPath('plain'), {
          body: {
            ...current,
            metadata: { ...current.metadata, labels: { ...current.metadata.labels, tier: 'web' } },
          },
        })
        .then(
          () => true,
          (error: unknown) => {
            if (error instanceof ApiError && error.statusCode === 409) return undefined;
            throw error;
          },
        );
    });
    await routed.request('PATCH', deploymentsPath('plain'), {
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { owner: 'team-a' } } },
    });

    // A caller not allowed the write is told that first, as kube-apiserver authorizes before it validates.
    const token = await newServiceAccountToken(env.controlPlane.kubeconfig, namespace, 'nobody');
    const nobody = throughRouter(token);
    try {
      expect((await refusal(nobody.request('POST', deploymentsPath(), { body: marked }))).statusCode).toBe(
        403,
      );
    } finally {
      await nobody.close();
    }
  });

  it('refuses a tenant’s write of a mark however it is spelled, through the router and in the cell itself', async () => {
    // The tenant of the report: get, list, patch and update of Deployments (and their status) and ConfigMaps.
    const token = await newServiceAccountToken(env.controlPlane.kubeconfig, namespace, 'tenant');
    await routed.request('POST', `${RBAC}/namespaces/${namespace}/roles`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'tenant' },
        rules: [
          {
            apiGroups: ['apps', ''],
            resources: ['deployments', 'deployments/status', 'configmaps'],
            verbs: ['get', 'list', 'patch', 'update'],
          },
        ],
      },
    });
    await routed.request('POST', `${RBAC}/namespaces/${namespace}/rolebindings`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'tenant' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant' },
        subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace }],
      },
    });
    await routed.request('POST', deploymentsPath(), { body: deployment('forged') });
    await routed.request('POST', inNamespace('configmaps'), {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'forged' }, data: { a: '1' } },
    });
    const tenant = throughRouter(token);
    const home = cells.get(cellOf('forged'))!;
    try {
      await eventually('the tenant’s Role in every cell', () =>
        tenant.request('GET', deploymentsPath('forged')).then(
          () => true,
          () => undefined,
        ),
      );
      // Sent as the text a client writes: the escapes must reach the router as they are.
      const patch = async (path: string, contentType: string, text: string) =>
        refusal(tenant.request('PATCH', path, { contentType, body: text }));
      const refusals = [
        await patch(
          deploymentsPath('forged'),
          'application/json-patch+json',
          '[{"op":"add","path":"/metadata/annotations/cellfed.io~1held-spec","value":"{}"}]',
        ),
        await patch(
          inNamespace('configmaps', 'forged'),
          'application/merge-patch+json',
          '{"metadata":{"annotations":{"cellfed.io\\u002ffenced-at":"2026-12-06T00:00:00Z"}}}',
        ),
        await patch(
          inNamespace('configmaps', 'forged'),
          'application/merge-patch+json',
          '{"metadata":{"labels":{"cellfed.io\\/followed-from":"control-plane"}}}',
        ),
        await patch(
          `${deploymentsPath('forged')}/status`,
          'application/merge-patch+json',
          '{"metadata":{"annotations":{"cellfed.io/held-spec":"{}"}}}',
        ),
      ];
      expect(refusals.map((refused) => [refused.statusCode, refused.message])).toEqual([
        [422, expect.stringContaining('metadata.annotations[cellfed.io/held-spec]: Forbidden')],
        [422, expect.stringContaining('metadata.annotations[cellfed.io/fenced-at]: Forbidden')],
        [422, expect.stringContaining('metadata.labels[cellfed.io/followed-from]: Forbidden')],
        [422, expect.stringContaining('metadata.annotations[cellfed.io/held-spec]: Forbidden')],
      ]);
      const marksOf = async (path: string) => {
        const { metadata } = (await found(home, path))!;
        return [...Object.keys(metadata.labels ?? {}), ...Object.keys(metadata.annotations ?? {})].filter(
          (key) => key.startsWith('cellfed.io/'),
        );
      };
      expect(await marksOf(deploymentsPath('forged'))).toEqual([]);
      expect(await marksOf(inNamespace('configmaps', 'forged'))).toEqual([]);

      // In the cell itself, past the router (the cell's own token for the mirrored ServiceAccount): the
      // marks policy judges the object as stored, whatever the write's encoding.
      const cellConfig = env.cells.find((cell) => cell.id === cellOf('forged'))!.kubeconfig;
      const cellTenant = withToken(
        cellConfig,
        await serviceAccountToken(cellConfig, namespace, 'tenant', 600),
      );
      try {
        const inCell = await eventually('the tenant’s Role in the cell', () =>
          refusal(
            cellTenant.request('PATCH', inNamespace('configmaps', 'forged'), {
              contentType: 'application/merge-patch+json',
              body: { metadata: { annotations: { 'cellfed.io/held-spec': '{}' } } },
            }),
          ).then((refused) =>
            refused.statusCode === 403 && !refused.message.includes('cellfed') ? undefined : refused,
          ),
        );
        expect(inCell.statusCode).toBe(422);
        expect(inCell.message).toContain(`ValidatingAdmissionPolicy '${MARKS_POLICY_NAME}'`);
        expect(inCell.message).toContain('metadata.annotations[cellfed.io/held-spec]: Forbidden');
        // A pod template's marks too: the cell's controllers would copy them onto the Pods they make.
        const template = await refusal(
          cellTenant.request('PATCH', deploymentsPath('forged'), {
            contentType: 'application/merge-patch+json',
            body: { spec: { template: { metadata: { labels: { 'cellfed.io/followed-from': 'x' } } } } },
          }),
        );
        expect(template.statusCode).toBe(422);
        expect(template.message).toContain(
          'spec.template.metadata.labels[cellfed.io/followed-from]: Forbidden',
        );
        // Its own labels it may write.
        await cellTenant.request('PATCH', inNamespace('configmaps', 'forged'), {
          contentType: 'application/merge-patch+json',
          body: { metadata: { labels: { team: 'a' } } },
        });
      } finally {
        await cellTenant.close();
      }
      expect(await marksOf(inNamespace('configmaps', 'forged'))).toEqual([]);
    } finally {
      await tenant.close();
    }
  });

  it('applies validating and mutating admission policies made through the router to Deployments in cells', async () => {
    const matchThisNamespace = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
    };
    const deploymentRules = {
      resourceRules: [
        {
          apiGroups: ['apps'],
          apiVersions: ['v1'],
          resources: ['deployments'],
          operations: ['CREATE', 'UPDATE'],
        },
      ],
    };
    await createClusterScoped(`${ADMISSION}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: `small-${suffix}` },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: deploymentRules,
        validations: [{ expression: 'object.spec.replicas <= 3', message: 'at most 3 replicas here' }],
      },
    } as KubeObject);
    await createClusterScoped(`${ADMISSION}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `small-${suffix}` },
      spec: {
        policyName: `small-${suffix}`,
        validationActions: ['Deny'],
        matchResources: matchThisNamespace,
      },
    } as KubeObject);
    await createClusterScoped(`${ADMISSION}/mutatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: `labelled-${suffix}` },
      spec: {
        failurePolicy: 'Fail',
        reinvocationPolicy: 'Never',
        matchConstraints: deploymentRules,
        mutations: [
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: {
              expression: 'Object{metadata: Object.metadata{labels: {"governed": "yes"}}}',
            },
          },
        ],
      },
    } as KubeObject);
    await createClusterScoped(`${ADMISSION}/mutatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: `labelled-${suffix}` },
      spec: { policyName: `labelled-${suffix}`, matchResources: matchThisNamespace },
    } as KubeObject);
    for (const path of clusterScoped.filter((one) => one.startsWith(ADMISSION)))
      await mirroredEverywhere(path);
    // In the cells each policy leaves cellfed's components' own writes (moves, promotions) alone, each by
    // its own user name there, and nothing else.
    const [inCell] = await mirroredEverywhere(`${ADMISSION}/validatingadmissionpolicies/small-${suffix}`);
    expect(
      (inCell as KubeObject & { spec: { matchConditions?: { name: string; expression: string }[] } }).spec
        .matchConditions,
    ).toEqual([
      {
        name: 'cellfed.io/not-cellfed',
        expression:
          '!(request.userInfo.username in ["cellfed-backup-controller", "cellfed-rebalance-controller", "cellfed-router"])',
      },
    ]);

    // Names in each cell, so that each cell's copy of the policies is the one that answers.
    const names = ids.flatMap((id) =>
      [0, 1].map((i) => pickName(`policed-${i}`, (name) => cellOf(name) === id)),
    );
    const dryRun = (name: string, replicas: number) => {
      const base = deployment(name);
      return routed
        .request<KubeObject>('POST', deploymentsPath(), {
          body: { ...base, spec: { ...base.spec, replicas } },
          query: { dryRun: 'All' },
        })
        .catch((error: unknown) => error);
    };
    // A cell's apiserver loads a new policy a moment after the mirror writes it.
    const refusals = await eventually('both policies in force in every cell', async () => {
      const tooMany = await Promise.all(names.map((name) => dryRun(name, 5)));
      const fine = await Promise.all(names.map((name) => dryRun(name, 1)));
      const mutated = fine.every(
        (answer) =>
          !(answer instanceof Error) && (answer as KubeObject).metadata.labels?.['governed'] === 'yes',
      );
      return mutated && tooMany.every((answer) => answer instanceof ApiError)
        ? (tooMany as ApiError[])
        : undefined;
    });
    for (const refused of refusals) {
      expect(refused.statusCode).toBe(422);
      expect(refused.message).toContain('at most 3 replicas here');
    }
    for (const name of names) {
      const created = await routed.request<KubeObject>('POST', deploymentsPath(), { body: deployment(name) });
      expect(created.metadata.labels).toEqual({ app: name, governed: 'yes' });
      const stored = await found(cells.get(cellOf(name))!, deploymentsPath(name));
      expect(stored?.metadata.labels).toEqual({ app: name, governed: 'yes' });
    }
  });

  it('finds an admission policy’s ConfigMap param in every cell, though the ConfigMap lives in one', async () => {
    const policy = `param-limit-${suffix}`;
    // A cellular ConfigMap in ids[0]: without its follower in ids[1] that cell finds no param and denies.
    const limits = pickName(`limits-${suffix}`, (name) => cellOf(name) === ids[0]);
    const policed = { 'governance.e2e/params': 'yes' };
    await createClusterScoped(`${ADMISSION}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: policy },
      spec: {
        failurePolicy: 'Fail',
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'], operations: ['CREATE'] },
          ],
        },
        validations: [
          {
            expression: 'object.spec.replicas <= int(params.data.max)',
            message: 'more replicas than the param',
          },
        ],
      },
    } as KubeObject);
    // No namespace in the paramRef: each request's own namespace is searched, as upstream's examples do.
    await createClusterScoped(`${ADMISSION}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: policy },
      spec: {
        policyName: policy,
        paramRef: { name: limits, parameterNotFoundAction: 'Deny' },
        validationActions: ['Deny'],
        matchResources: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
          objectSelector: { matchLabels: policed },
        },
      },
    } as KubeObject);
    await routed.request('POST', inNamespace('configmaps'), {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: limits }, data: { max: '2' } },
    });
    const names = ids.map((id) => pickName(`param-${id}`, (name) => cellOf(name) === id));
    const dryRun = (name: string, replicas: number) => {
      const base = deployment(name);
      return routed
        .request<KubeObject>('POST', deploymentsPath(), {
          body: {
            ...base,
            metadata: { ...base.metadata, labels: { ...base.metadata.labels, ...policed } },
            spec: { ...base.spec, replicas },
          },
          query: { dryRun: 'All' },
        })
        .then(
          () => 'admitted',
          (error: unknown) => (error instanceof ApiError ? error.message : String(error)),
        );
    };
    // Every cell's apiserver: one replica admitted, three refused by the param's max of 2.
    const answers = await eventually('the param in force in every cell', async () => {
      const now = await Promise.all(
        names.map(async (name) => [await dryRun(name, 1), await dryRun(name, 3)]),
      );
      return now.every(
        ([one, three]) => one === 'admitted' && three?.includes('more replicas than the param'),
      )
        ? now
        : undefined;
    });
    expect(answers).toHaveLength(ids.length);
    const follower = await found(cells.get(ids[1]!)!, inNamespace('configmaps', limits));
    expect(follower?.data).toEqual({ max: '2' });
    expect(follower?.metadata.labels?.[FOLLOWER_LABEL]).toBe(ids[0]);

    // The param changes through the router: every cell reads the new max.
    await routed.request('PATCH', inNamespace('configmaps', limits), {
      body: { data: { max: '5' } },
      contentType: 'application/merge-patch+json',
    });
    await eventually('the new max in force in every cell', async () => {
      const now = await Promise.all(names.map((name) => dryRun(name, 3)));
      return now.every((answer) => answer === 'admitted') ? true : undefined;
    });

    // No binding names it any more: its follower leaves the other cell; the ConfigMap stays where it lives.
    await routed.request('DELETE', `${ADMISSION}/validatingadmissionpolicybindings/${policy}`);
    await eventually('the follower gone', async () =>
      (await found(cells.get(ids[1]!)!, inNamespace('configmaps', limits))) ? undefined : true,
    );
    expect(await found(routed, inNamespace('configmaps', limits))).toMatchObject({ data: { max: '5' } });
  });

  it('takes a namespace that lived a moment out of the cells it was written into', async () => {
    const brief = `${namespace}-brief`;
    await routed.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: brief } },
    });
    // The write goes before the mirror has seen the namespace: the router makes it in the cell first.
    await routed.request('POST', `/api/v1/namespaces/${brief}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } },
    });
    const home = cells.get(table.route(table.keyOf({ namespace: brief, name: 'settings' })).oldCell!)!;
    const made = await found(home, `/api/v1/namespaces/${brief}`);
    expect(made?.metadata.labels?.[MIRRORED_LABEL]).toBe('control-plane');
    await routed.request('DELETE', `/api/v1/namespaces/${brief}`);
    await eventually(
      `${brief} gone from its cell`,
      async () => ((await found(home, `/api/v1/namespaces/${brief}`)) ? undefined : true),
      60_000,
    );
  });

  it("ends a namespace's deletion only once the cells' copies are gone: the name made again shows none of its objects", async () => {
    const reused = `${namespace}-reused`;
    const configMaps = `/api/v1/namespaces/${reused}/configmaps`;
    const inControlPlane = `/api/v1/namespaces/${reused}`;
    await routed.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: reused } },
    });
    // Spread over the cells by name.
    for (let i = 0; i < 6; i++)
      await routed.request('POST', configMaps, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `old-${i}` } },
      });
    await eventually(`${reused} finalized by the rebalance controller`, async () =>
      (await routed.request<KubeObject>('GET', inControlPlane)).metadata.finalizers?.includes(CELLS_FINALIZER)
        ? true
        : undefined,
    );
    await routed.request('DELETE', inControlPlane);
    // While the cells still have it, the control plane's namespace stays (Terminating), as one apiserver's
    // stays while its contents go; once it is gone, no cell has it.
    await eventually(
      `${reused} gone from the control plane`,
      async () => ((await found(routed, inControlPlane)) ? undefined : true),
      120_000,
    );
    expect(await Promise.all(inCells.map((cell) => found(cell, inControlPlane)))).toEqual(
      ids.map(() => undefined),
    );
    await routed.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: reused } },
    });
    const listed = await routed.request<KubeList>('GET', configMaps);
    expect(listed.items.map((item) => item.metadata.name).filter((name) => name?.startsWith('old-'))).toEqual(
      [],
    );
    await routed.request('DELETE', inControlPlane);
  });

  it("deletes a cell's copy of an earlier namespace of the same name (told by uid), with what it holds", async () => {
    const earlier = `${namespace}-earlier`;
    const path = `/api/v1/namespaces/${earlier}`;
    await routed.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: earlier } },
    });
    const [cell] = inCells as [KubeClient];
    const copy = await eventually(`${earlier} mirrored with its uid`, async () => {
      const made = await found(cell, path);
      return made?.metadata.annotations?.[NAMESPACE_UID_ANNOTATION] ? made : undefined;
    });
    const uid = (await routed.request<KubeObject>('GET', path)).metadata.uid;
    expect(copy.metadata.annotations?.[NAMESPACE_UID_ANNOTATION]).toBe(uid);
    // As a cell that was out of reach while the namespace was deleted and made again would have it: the
    // cell's administrator stamps another uid on the copy (the marks policy leaves system:masters alone).
    await cell.request('PATCH', path, {
      body: { metadata: { annotations: { [NAMESPACE_UID_ANNOTATION]: 'an-earlier-uid' } } },
      contentType: 'application/merge-patch+json',
    });
    // A change of the control plane's namespace has the mirror compare every cell at once.
    await routed.request('PATCH', path, {
      body: { metadata: { labels: { 'e2e.cellfed.io/touched': 'yes' } } },
      contentType: 'application/merge-patch+json',
    });
    await eventually(
      `the earlier copy of ${earlier} deleted and made again with the current uid`,
      async () => {
        const now = await found(cell, path);
        return now && !now.metadata.deletionTimestamp && now.metadata.uid !== copy.metadata.uid
          ? now
          : undefined;
      },
      120_000,
    ).then((made) => expect(made.metadata.annotations?.[NAMESPACE_UID_ANNOTATION]).toBe(uid));
    await routed.request('DELETE', path);
  });

  it('puts NetworkPolicies and webhook configurations in every cell and takes them out when deleted', async () => {
    const policies = `/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies`;
    const policy = `${policies}/deny-ingress`;
    await routed.request('POST', policies, {
      body: {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'deny-ingress' },
        spec: { podSelector: {}, policyTypes: ['Ingress'] },
      },
    });
    const webhook = `webhook-${suffix}`;
    await createClusterScoped(`${ADMISSION}/validatingwebhookconfigurations`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: webhook },
      webhooks: [
        {
          name: 'check.governance.e2e.cellfed.io',
          clientConfig: { url: 'https://policy.invalid/check' },
          rules: [
            {
              apiGroups: ['e2e.cellfed.io'],
              apiVersions: ['v1'],
              resources: ['nothings'],
              operations: ['CREATE'],
            },
          ],
          failurePolicy: 'Ignore',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    } as KubeObject);
    const copies = await mirroredEverywhere(policy);
    expect(copies.map((copy) => (copy as KubeObject & { spec?: unknown }).spec)).toEqual(
      ids.map(() => ({ podSelector: {}, policyTypes: ['Ingress'] })),
    );
    await mirroredEverywhere(`${ADMISSION}/validatingwebhookconfigurations/${webhook}`);

    await routed.request('DELETE', policy);
    await eventually('the NetworkPolicy gone from every cell', async () =>
      (await Promise.all(inCells.map((cell) => found(cell, policy)))).every((copy) => copy === undefined)
        ? true
        : undefined,
    );
  });
  it('holds a ResourceQuota to its limits across the cells: shares in each cell, use summed, unused share drawn where a write needs it', async () => {
    const quotaNamespace = `quota-${suffix}`;
    const nsPath = (resource: string, name = '') =>
      `/api/v1/namespaces/${quotaNamespace}/${resource}${name ? `/${name}` : ''}`;
    const deploymentsIn = (name = '') =>
      `${DEPLOYMENTS}/namespaces/${quotaNamespace}/deployments${name ? `/${name}` : ''}`;
    const cellIn = (name: string) => table.route(table.keyOf({ namespace: quotaNamespace, name })).oldCell!;
    await routed.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: quotaNamespace } },
    });
    try {
      await routed.request('POST', nsPath('resourcequotas'), {
        body: {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name: 'team' },
          spec: {
            hard: { 'count/deployments.apps': '2', pods: '3', 'requests.cpu': '1', resourcequotas: '1' },
          },
        },
      });
      interface Quota extends KubeObject {
        spec: { hard: Record<string, string> };
        status?: { hard?: Record<string, string>; used?: Record<string, string> };
      }
      const usedReaches = (used: Record<string, string>) =>
        eventually(`the quota's status to show ${JSON.stringify(used)}`, async () => {
          const quota = await routed.request<Quota>('GET', nsPath('resourcequotas', 'team'));
          return Object.entries(used).every(([name, value]) => quota.status?.used?.[name] === value)
            ? quota
            : undefined;
        }).catch(async (error: unknown) => {
          // What the router shows and what each cell holds, to tell which side did not count.
          const seen = await Promise.all(
            [routed, ...inCells].map((client) => found(client, nsPath('resourcequotas', 'team'))),
          );
          throw new Error(`${String(error)}; quota and cell copies: ${JSON.stringify(seen)}`);
        });
      // Counted in the cells and shown as one apiserver shows it: hard from the spec, nothing used yet.
      const counted = await usedReaches({
        'count/deployments.apps': '0',
        pods: '0',
        'requests.cpu': '0',
        resourcequotas: '1',
      });
      expect(counted.status?.hard).toEqual(counted.spec.hard);
      // Each cell holds a share, and the shares add up to the limits.
      const shares = async () =>
        Promise.all(
          inCells.map(
            async (cell) =>
              JSON.parse(
                (await cell.request<Quota>('GET', nsPath('resourcequotas', 'team'))).metadata.annotations?.[
                  QUOTA_SHARE_ANNOTATION
                ] ?? '{}',
              ) as Record<string, string>,
          ),
        );
      const total = (all: Record<string, string>[], name: string) =>
        all.reduce((sum, share) => sum + parseQuantity(share[name] ?? '0'), 0n);
      const first = await shares();
      expect(first.every((share) => share['count/deployments.apps'] === '1')).toBe(true);
      expect(total(first, 'requests.cpu')).toBe(parseQuantity('1'));

      // Two Deployments in one cell: its share is one, so the second is refused there and the router draws
      // the other cell's unused share into it, as one apiserver would admit it.
      const inFirstCell = pickName('team-app', (name) => cellIn(name) === ids[0]);
      const alsoThere = pickName('team-svc', (name) => cellIn(name) === ids[0]);
      await routed.request('POST', deploymentsIn(), { body: deployment(inFirstCell) });
      await routed.request('POST', deploymentsIn(), { body: deployment(alsoThere) });
      expect((await shares()).map((share) => share['count/deployments.apps'])).toEqual(['2', '0']);
      // The federation's limit holds in every cell: a third Deployment is refused wherever it goes.
      for (const id of ids) {
        const name = pickName(`extra-${id}`, (candidate) => cellIn(candidate) === id);
        const refused = await refusal(routed.request('POST', deploymentsIn(), { body: deployment(name) }));
        expect(refused.statusCode).toBe(403);
        expect(refused.message).toContain('exceeded quota: team');
      }
      await usedReaches({ 'count/deployments.apps': '2' });

      // Pods a client creates: 800m of the 1-CPU limit fits once the other cell's unused half is drawn in;
      // 300m more does not fit anywhere.
      const pod = (name: string, cpu: string) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: {
          containers: [
            { name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu } } },
          ],
        },
      });
      await routed.request('POST', nsPath('pods'), { body: pod('big', '800m') });
      const small = await refusal(routed.request('POST', nsPath('pods'), { body: pod('small', '300m') }));
      expect(small.message).toContain('exceeded quota: team');
      await routed.request('POST', nsPath('pods'), { body: pod('tiny', '200m') });
      await usedReaches({ pods: '2', 'requests.cpu': '1' });
      const after = await shares();
      expect(total(after, 'requests.cpu')).toBe(parseQuantity('1'));
      expect(total(after, 'pods')).toBe(parseQuantity('3'));

      // Released when deleted, as one apiserver's quota controller releases it.
      await routed.request('DELETE', deploymentsIn(inFirstCell));
      await routed.request('DELETE', nsPath('pods', 'big'), { query: { gracePeriodSeconds: 0 } });
      await usedReaches({ 'count/deployments.apps': '1', pods: '1', 'requests.cpu': '200m' });

      // The copies go with the quota.
      await routed.request('DELETE', nsPath('resourcequotas', 'team'));
      await eventually('the quota copies gone from every cell', async () =>
        (await Promise.all(inCells.map((cell) => found(cell, nsPath('resourcequotas', 'team'))))).every(
          (copy) => copy === undefined,
        )
          ? true
          : undefined,
      );
    } finally {
      await routed.request('DELETE', `/api/v1/namespaces/${quotaNamespace}`).catch(() => undefined);
    }
  });
  it('never lets a burst of creates across the cells exceed a quota, and fills it to the limit after', async () => {
    const burstNamespace = `burst-${suffix}`;
    const configMaps = `/api/v1/namespaces/${burstNamespace}/configmaps`;
    const quotaPath = `/api/v1/namespaces/${burstNamespace}/resourcequotas/burst`;
    await routed.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: burstNamespace } },
    });
    try {
      // 8 ConfigMaps, one of them the namespace's kube-root-ca.crt (each cell has its own; counted once).
      await routed.request('POST', `/api/v1/namespaces/${burstNamespace}/resourcequotas`, {
        body: {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name: 'burst' },
          spec: { hard: { configmaps: '8' } },
        },
      });
      const used = () =>
        routed
          .request<KubeObject & { status?: { used?: Record<string, string> } }>('GET', quotaPath)
          .then((quota) => quota.status?.used?.configmaps);
      await eventually('the burst quota counted', async () => ((await used()) === '1' ? true : undefined));
      const create = (name: string) =>
        routed
          .request('POST', configMaps, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } } })
          .then(
            () => 'created' as const,
            (error: unknown) => {
              if (
                error instanceof ApiError &&
                error.statusCode === 403 &&
                error.message.includes('exceeded quota')
              )
                return 'refused' as const;
              throw error;
            },
          );
      // 24 at once, spread over both cells by the ring.
      const burst = await Promise.all(Array.from({ length: 24 }, (_, i) => create(`burst-${i}`)));
      const created = burst.filter((outcome) => outcome === 'created').length;
      expect(created).toBeLessThanOrEqual(7);
      // One at a time, until the quota refuses: the limit is reached exactly, in whichever cells.
      let next = 100;
      while ((await create(`fill-${next++}`)) === 'created')
        if (next > 130) throw new Error('the quota never refused');
      process.stdout.write(
        `quota burst: ${created} of 24 created at once (room for 7), ${next - 101} more one at a time\n`,
      );
      const listed = await routed.request<KubeList>('GET', configMaps);
      expect(
        listed.items.map((item) => item.metadata.name).filter((name) => name !== 'kube-root-ca.crt'),
      ).toHaveLength(7);
      await eventually('the quota to show the limit used', async () =>
        (await used()) === '8' ? true : undefined,
      );
    } finally {
      await routed.request('DELETE', `/api/v1/namespaces/${burstNamespace}`).catch(() => undefined);
    }
  });
});
