import { MILLI, UNIT } from './quantity.ts';

/** The resource whose objects a quota's resource name counts. */
export interface CountedResource {
  readonly group: string;
  readonly resource: string;
}

const PODS: CountedResource = { group: '', resource: 'pods' };
const CLAIMS: CountedResource = { group: '', resource: 'persistentvolumeclaims' };
/** The core resources a quota counts under their bare plural (`configmaps`), as `count/configmaps` too. */
const CORE_COUNTED = new Set([
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
]);

/**
 * The resource a ResourceQuota's resource name counts, as kube-apiserver's quota evaluators read names:
 * `count/<resource>[.<group>]` and the bare core plurals count objects; `services.nodeports` and
 * `services.loadbalancers` count Services; `requests.storage` and the `<class>.storageclass.storage.k8s.io/…`
 * names sum claims; compute names (`cpu`, `requests.memory`, `limits.*`, `hugepages-*`, extended
 * resources) sum pods. Undefined for a name no evaluator counts.
 */
export function countedResource(name: string): CountedResource | undefined {
  if (name.startsWith('count/')) {
    const [resource = '', ...group] = name.slice('count/'.length).split('.');
    return resource ? { group: group.join('.'), resource } : undefined;
  }
  if (CORE_COUNTED.has(name)) return { group: '', resource: name };
  if (name === 'services.nodeports' || name === 'services.loadbalancers')
    return { group: '', resource: 'services' };
  if (name === 'requests.storage' || name.includes('.storageclass.storage.k8s.io/')) return CLAIMS;
  if (
    ['cpu', 'memory', 'ephemeral-storage'].includes(name) ||
    name.startsWith('requests.') ||
    name.startsWith('limits.') ||
    name.startsWith('hugepages-')
  )
    return PODS;
  return undefined;
}

/** Whether the name counts objects (`count/…`, `configmaps`), not what they hold (`requests.cpu`). */
export function countsObjects(name: string): boolean {
  return name.startsWith('count/') || CORE_COUNTED.has(name);
}

/**
 * The step a limit is divided in among cells: a milli-CPU for CPU names (a share of `1` CPU over two cells
 * is `500m` each), a whole unit for everything else (pods, objects, bytes): a share of 1.5 pods admits one.
 */
export function shareStep(name: string): bigint {
  return name === 'cpu' || name.endsWith('.cpu') ? MILLI : UNIT;
}
