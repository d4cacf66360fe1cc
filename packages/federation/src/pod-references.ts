import { FOLLOWER_LABEL, type GroupVersionResource } from '@cellfed/api';

import type { KubeObject } from './kube-object.ts';

/** The label selector of everything but follower copies. */
export const NOT_FOLLOWER_SELECTOR = `!${FOLLOWER_LABEL}`;

/**
 * What a pod template names and needs in its own cell to start: ConfigMaps and Secrets, and the
 * PersistentVolumeClaims it mounts, by name.
 */
export interface PodReferences {
  readonly configMaps: ReadonlySet<string>;
  readonly secrets: ReadonlySet<string>;
  readonly claims: ReadonlySet<string>;
}

/**
 * The workload resources whose objects carry pod templates, `group/resource`. Pods themselves are left out:
 * a cell's controllers make nearly all of them from these templates, and listing every pod of a namespace
 * would cost more than the templates do.
 */
const WORKLOADS = new Set([
  'apps/deployments',
  'apps/statefulsets',
  'apps/daemonsets',
  'apps/replicasets',
  'batch/jobs',
  'batch/cronjobs',
  '/replicationcontrollers',
]);

/** Whether objects of `resource` carry a pod template. */
export function hasPodTemplate(resource: Pick<GroupVersionResource, 'group' | 'resource'>): boolean {
  return WORKLOADS.has(`${resource.group}/${resource.resource}`);
}

interface Named {
  name?: string;
}
interface Container {
  env?: { valueFrom?: { configMapKeyRef?: Named; secretKeyRef?: Named } }[];
  envFrom?: { configMapRef?: Named; secretRef?: Named }[];
}
interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
  imagePullSecrets?: Named[];
  volumes?: {
    configMap?: Named;
    secret?: { secretName?: string };
    projected?: { sources?: { configMap?: Named; secret?: Named }[] };
    persistentVolumeClaim?: { claimName?: string };
  }[];
}

/** The pod spec inside a workload: `spec.template.spec`, or a CronJob's `spec.jobTemplate.spec.template.spec`. */
function podSpecOf(object: KubeObject): PodSpec | undefined {
  const spec = (object as { spec?: Record<string, unknown> }).spec;
  const template = (spec?.['template'] ??
    (spec?.['jobTemplate'] as { spec?: { template?: unknown } } | undefined)?.spec?.template) as
    { spec?: PodSpec } | undefined;
  return template?.spec;
}

/**
 * The ConfigMaps and Secrets a workload's pods name, where a kubelet or a cell's admission needs them in
 * the pod's own cell: volumes (also projected sources), `env` and `envFrom` of every container, and
 * `imagePullSecrets`. Optional references count too: a pod uses them when they exist. And the claims its
 * volumes mount (`persistentVolumeClaim.claimName`; a StatefulSet's `volumeClaimTemplates` and ephemeral
 * volumes make theirs in the cell).
 */
export function podReferences(object: KubeObject): PodReferences {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  const claims = new Set<string>();
  const add = (into: Set<string>, name: string | undefined) => {
    if (name) into.add(name);
  };
  const spec = podSpecOf(object);
  if (!spec) return { configMaps, secrets, claims };
  for (const volume of spec.volumes ?? []) {
    add(configMaps, volume.configMap?.name);
    add(secrets, volume.secret?.secretName);
    add(claims, volume.persistentVolumeClaim?.claimName);
    for (const source of volume.projected?.sources ?? []) {
      add(configMaps, source.configMap?.name);
      add(secrets, source.secret?.name);
    }
  }
  for (const container of [
    ...(spec.containers ?? []),
    ...(spec.initContainers ?? []),
    ...(spec.ephemeralContainers ?? []),
  ]) {
    for (const variable of container.env ?? []) {
      add(configMaps, variable.valueFrom?.configMapKeyRef?.name);
      add(secrets, variable.valueFrom?.secretKeyRef?.name);
    }
    for (const source of container.envFrom ?? []) {
      add(configMaps, source.configMapRef?.name);
      add(secrets, source.secretRef?.name);
    }
  }
  for (const pullSecret of spec.imagePullSecrets ?? []) add(secrets, pullSecret.name);
  return { configMaps, secrets, claims };
}
