import { join } from 'node:path';

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

/** A one-node kind cluster whose apiserver is published on a free loopback port. */
export function kindClusterConfig(id: string, nodeImage?: string) {
  return {
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    name: kindClusterName(id),
    networking: { apiServerAddress: '127.0.0.1', apiServerPort: 0 },
    nodes: [{ role: 'control-plane', ...(nodeImage ? { image: nodeImage } : {}) }],
  };
}

export interface KindPlanInput {
  dir: string;
  /** The control plane first, then the cells. */
  ids: readonly string[];
  controlPlaneId: string;
  /** The project's images, loaded into the control-plane cluster where the chart runs them. */
  images: readonly string[];
  nodeImage?: string;
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
        ...images.map((image) => ({
          command: 'kind',
          args: ['load', 'docker-image', image, '--name', clusterName],
        })),
        {
          command: 'kind',
          args: ['get', 'kubeconfig', '--internal', '--name', clusterName],
          stdoutFile: internalKubeconfig,
        },
      ],
    };
  });
}

export function planKindDown(clusterNames: readonly string[]): Command[] {
  return clusterNames.map((name) => ({ command: 'kind', args: ['delete', 'cluster', '--name', name] }));
}

/** Probe for a Docker engine: kind cannot run without one. */
export const DOCKER_INFO: Command = { command: 'docker', args: ['info', '--format', '{{.ServerVersion}}'] };
