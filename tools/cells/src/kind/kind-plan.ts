import { join } from 'node:path';

import { identityValues, kindCellAccount, serviceAccountUser } from '../chart/cell-identities.ts';
import { KUBEADM_EXTRA_CONTROLLERS, controllersFlagValue } from '../control-plane/controllers.ts';
import { serviceRangeOf } from '../control-plane/service-ranges.ts';

/** An external command, as data: planned by pure functions, run by the provider, asserted by unit tests. */
export interface Command {
  command: string;
  args: string[];
  /** File the command's stdout is written to. */
  stdoutFile?: string;
}

export const KIND_CLUSTER_PREFIX = 'cellfed-';

export function kindClusterName(id: string): string {
  return `${KIND_CLUSTER_PREFIX}${id}`;
}

/** The node port of the router's Service in the control-plane cluster, published on the host by kind. */
export const ROUTER_NODE_PORT = 30443;

export interface KindClusterOptions {
  /** kind's node image (kind's default when absent). */
  readonly nodeImage?: string | undefined;
  /** The loopback port the router's node port is published on (the control-plane cluster only). */
  readonly routerHostPort?: number | undefined;
  /** Controllers kube-controller-manager leaves off (the control-plane cluster's quota controller). */
  readonly disabledControllers?: readonly string[] | undefined;
}

/**
 * A one-node kind cluster whose apiserver is published on a free loopback port, allocating ClusterIPs from a
 * range of its own (serviceRangeOf).
 */
export function kindClusterConfig(id: string, options: KindClusterOptions = {}) {
  const ports = options.routerHostPort
    ? {
        extraPortMappings: [
          { containerPort: ROUTER_NODE_PORT, hostPort: options.routerHostPort, listenAddress: '127.0.0.1' },
        ],
      }
    : {};
  const controllers = options.disabledControllers?.length
    ? {
        // kind's kubeadm config (v1beta4 from Kubernetes 1.36) lists extraArgs: one more is appended.
        kubeadmConfigPatchesJSON6902: [
          {
            group: 'kubeadm.k8s.io',
            version: 'v1beta4',
            kind: 'ClusterConfiguration',
            patch: JSON.stringify([
              {
                op: 'add',
                path: '/controllerManager/extraArgs/-',
                value: {
                  name: 'controllers',
                  value: controllersFlagValue(options.disabledControllers, KUBEADM_EXTRA_CONTROLLERS),
                },
              },
            ]),
          },
        ],
      }
    : {};
  return {
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    name: kindClusterName(id),
    networking: { apiServerAddress: '127.0.0.1', apiServerPort: 0, serviceSubnet: serviceRangeOf(id).cidr },
    ...controllers,
    nodes: [{ role: 'control-plane', ...(options.nodeImage ? { image: options.nodeImage } : {}), ...ports }],
  };
}

export interface KindPlanInput {
  dir: string;
  /** The control plane first, then the cells. */
  ids: readonly string[];
  controlPlaneId: string;
  /** The project's images, loaded into the control-plane cluster where the chart runs them. */
  images: readonly string[];
}

export interface KindClusterPlan {
  id: string;
  clusterName: string;
  configFile: string;
  /** kubeconfig for the host (the tests). */
  kubeconfig: string;
  /** kubeconfig with the cluster's address on the kind network, for controllers running in another cluster. */
  internalKubeconfig: string;
  create: Command[];
}

/** Everything `up` runs per cluster, in order: create, load the images, export the internal kubeconfig. */
export function planKindUp(input: KindPlanInput): KindClusterPlan[] {
  return input.ids.map((id) => {
    const clusterName = kindClusterName(id);
    const configFile = join(input.dir, 'kind', `${id}.json`);
    const kubeconfig = join(input.dir, 'kubeconfig', `${id}.kubeconfig`);
    const internalKubeconfig = join(input.dir, 'kubeconfig', `${id}.internal.kubeconfig`);
    const images = id === input.controlPlaneId ? input.images : [];
    return {
      id,
      clusterName,
      configFile,
      kubeconfig,
      internalKubeconfig,
      create: [
        {
          command: 'kind',
          args: [
            'create',
            'cluster',
            '--name',
            clusterName,
            '--config',
            configFile,
            '--kubeconfig',
            kubeconfig,
            '--wait',
            '180s',
          ],
        },
        // One load for all: kind saves them in one archive, so the layers they share go over once.
        ...(images.length > 0
          ? [{ command: 'kind', args: ['load', 'docker-image', ...images, '--name', clusterName] }]
          : []),
        {
          command: 'kind',
          args: ['get', 'kubeconfig', '--internal', '--name', clusterName],
          stdoutFile: internalKubeconfig,
        },
      ],
    };
  });
}

/** Kills a cluster's node container: its apiserver and etcd stop at once, as in a failure. */
export function planKindKill(id: string): Command {
  return { command: 'docker', args: ['kill', `${kindClusterName(id)}-control-plane`] };
}

export function planKindDown(clusterNames: readonly string[]): Command[] {
  return clusterNames.map((name) => ({ command: 'kind', args: ['delete', 'cluster', '--name', name] }));
}

/** The chart's component each image runs, by the image's repository name. */
const COMPONENT_OF_IMAGE: Record<string, string> = {
  'cell-router': 'router',
  'rebalance-controller': 'rebalanceController',
  'backup-controller': 'backupController',
};

export interface ChartInstallInput {
  /** The control plane's host kubeconfig. */
  kubeconfig: string;
  chartDir: string;
  helm: string;
  kubectl: string;
  namespace: string;
  /** The images loaded into the control-plane cluster; a component whose image is not among them is off. */
  images: readonly string[];
  /** The router's serving certificate and key, and the CA that signed it (PEM files). */
  routerCert: string;
  routerKey: string;
  routerCa: string;
}

/**
 * The chart installed into the control-plane cluster with the images kind loaded there (pulled never: they
 * are on the node already), the quota controller with the router: the router's TLS Secret (with its CA)
 * first, then `helm upgrade --install … --wait`. The
 * router's Service is a NodePort on {@link ROUTER_NODE_PORT}, which the cluster publishes on the host.
 */
export function planChartInstall(input: ChartInstallInput): Command[] {
  const sets: string[] = [];
  const enabled = new Set<string>();
  for (const image of input.images) {
    const at = image.lastIndexOf(':');
    const slash = image.lastIndexOf('/');
    const repository = at > slash ? image.slice(0, at) : image;
    const tag = at > slash ? image.slice(at + 1) : 'latest';
    const component = COMPONENT_OF_IMAGE[repository.slice(repository.lastIndexOf('/') + 1)];
    if (!component) continue;
    enabled.add(component);
    sets.push(
      `${component}.image.repository=${repository}`,
      `${component}.image.tag=${tag}`,
      `${component}.image.pullPolicy=Never`,
      // The control-plane cluster's disruption controller is off (control-plane/controllers.ts): a budget
      // there would refuse every eviction of the component's pods (docs/running.md).
      `${component}.podDisruptionBudget.enabled=false`,
    );
  }
  for (const component of Object.values(COMPONENT_OF_IMAGE))
    if (!enabled.has(component)) sets.push(`${component}.enabled=false`);
  if (enabled.has('router'))
    sets.push(
      'router.service.type=NodePort',
      `router.service.nodePort=${ROUTER_NODE_PORT}`,
      // kube-controller-manager's image, which the node image holds for the control plane's own.
      'quotaController.image.pullPolicy=Never',
      'quotaController.podDisruptionBudget.enabled=false',
    );
  // It counts through the router.
  else sets.push('quotaController.enabled=false');
  const kube = ['--kubeconfig', input.kubeconfig, '--namespace', input.namespace];
  return [
    {
      command: input.kubectl,
      args: [
        ...kube,
        'create',
        'secret',
        'generic',
        'cellfed-router-tls',
        '--type=kubernetes.io/tls',
        `--from-file=tls.crt=${input.routerCert}`,
        `--from-file=tls.key=${input.routerKey}`,
        // The quota controller trusts the router by it, as cert-manager's Secrets carry it.
        `--from-file=ca.crt=${input.routerCa}`,
      ],
    },
    {
      command: input.helm,
      args: [
        ...['upgrade', '--install', 'cellfed', input.chartDir, ...kube],
        ...sets.flatMap((set) => ['--set', set]),
        // Each component reads its own cell credentials and is its own ServiceAccount in the cells.
        ...identityValues((component) => serviceAccountUser(kindCellAccount(component))),
        ...['--wait', '--timeout', '5m'],
      ],
    },
  ];
}

/** Probe for a Docker engine: kind cannot run without one. */
export const DOCKER_INFO: Command = { command: 'docker', args: ['info', '--format', '{{.ServerVersion}}'] };
