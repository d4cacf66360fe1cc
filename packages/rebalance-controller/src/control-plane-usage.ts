import {
  ApiError,
  countedResource,
  countsObjects,
  parseQuantity,
  resourceListWatch,
  type CountedResource,
  type KubeClient,
  type KubeObject,
} from '@cellfed/controller-kit';

const STORAGE_CLASS = '.storageclass.storage.k8s.io/';

interface Claim extends KubeObject {
  spec?: { storageClassName?: string; resources?: { requests?: Record<string, string> } };
}

interface Service extends KubeObject {
  spec?: { type?: string; ports?: unknown[]; allocateLoadBalancerNodePorts?: boolean };
}

/**
 * What a namespace uses of the resources a quota names whose objects live in the control plane (Secrets and
 * PersistentVolumeClaims by default, quotas themselves, any resource neither cellular nor made by cells),
 * counted as kube-apiserver's quota evaluators count it: objects, and for claims and Services the storage,
 * node ports and load balancers they hold (claims by `spec.resources.requests`). Scoped quotas and the
 * compute resources of Pods are left uncounted rather than counted wrong. The control plane's own quota controller does not run (it would
 * write its count over the federation's), so this is what counts them.
 */
export class ControlPlaneUsage {
  private readonly client: KubeClient;
  /** The preferred version of each API group, from discovery. */
  private readonly versions = new Map<string, string>();

  constructor(client: KubeClient) {
    this.client = client;
  }

  /**
   * The usage of each name. A name whose resource the control plane does not serve, or the controller may
   * not list (the chart's quotaCountRules), is left out and named in `uncounted`.
   */
  async usage(
    namespace: string,
    names: readonly string[],
    signal: AbortSignal,
    /** The quota's scopes: a scoped quota's names are not counted here (kube's evaluators match scopes). */
    scoped = false,
  ): Promise<{ usage: Map<string, bigint>; uncounted: string[] }> {
    const byResource = new Map<string, { resource: CountedResource; names: string[] }>();
    const uncounted: string[] = [];
    for (const name of names) {
      const resource = countedResource(name);
      if (!resource) continue;
      if (scoped || !evaluable(name, resource)) {
        uncounted.push(name);
        continue;
      }
      const id = `${resource.group}/${resource.resource}`;
      const entry = byResource.get(id) ?? { resource, names: [] };
      entry.names.push(name);
      byResource.set(id, entry);
    }
    const usage = new Map<string, bigint>();
    for (const { resource, names: counted } of byResource.values()) {
      const objects = await this.list(resource, namespace, needsObjects(resource), signal).catch(
        (error: unknown) => {
          if (error instanceof ApiError && (error.statusCode === 403 || error.statusCode === 404))
            return undefined;
          throw error;
        },
      );
      if (!objects) uncounted.push(...counted);
      else for (const name of counted) usage.set(name, evaluate(name, resource, objects));
    }
    return { usage, uncounted };
  }

  private async list(
    resource: CountedResource,
    namespace: string,
    whole: boolean,
    signal: AbortSignal,
  ): Promise<KubeObject[] | undefined> {
    const version = await this.version(resource.group);
    if (!version) return undefined;
    const listWatch = resourceListWatch(
      this.client,
      { ...resource, version, namespaced: true },
      { namespace, metadataOnly: !whole },
    );
    const items: KubeObject[] = [];
    let token: string | undefined;
    do {
      const page = await listWatch.list({ limit: 500, ...(token ? { continue: token } : {}), signal });
      items.push(...page.items);
      token = page.continue;
    } while (token);
    return items;
  }

  private async version(group: string): Promise<string | undefined> {
    if (group === '') return 'v1';
    const known = this.versions.get(group);
    if (known) return known;
    const found = await this.client
      .request<{ preferredVersion?: { version?: string } }>('GET', `/apis/${group}`)
      .catch(() => undefined);
    const version = found?.preferredVersion?.version;
    if (version) this.versions.set(group, version);
    return version;
  }
}

/**
 * Whether this counter evaluates the name as kube-apiserver would: object counts of any resource, and the
 * storage, node ports and load balancers claims and Services hold. Not the compute resources of Pods.
 */
function evaluable(name: string, resource: CountedResource): boolean {
  return (
    countsObjects(name) ||
    (resource.group === '' && ['persistentvolumeclaims', 'services'].includes(resource.resource))
  );
}

function needsObjects(resource: CountedResource): boolean {
  return (
    resource.group === '' &&
    (resource.resource === 'persistentvolumeclaims' || resource.resource === 'services')
  );
}

/** One name's usage over the namespace's objects of its resource. */
function evaluate(name: string, resource: CountedResource, objects: readonly KubeObject[]): bigint {
  const count = (matching: readonly KubeObject[]) => BigInt(matching.length) * parseQuantity('1');
  if (resource.resource === 'persistentvolumeclaims' && resource.group === '') {
    const claims = objects as Claim[];
    const classed = name.includes(STORAGE_CLASS);
    const inClass = classed
      ? claims.filter((claim) => claim.spec?.storageClassName === name.slice(0, name.indexOf(STORAGE_CLASS)))
      : claims;
    if (name.endsWith('requests.storage'))
      return inClass.reduce(
        (total, claim) => total + parseQuantity(claim.spec?.resources?.requests?.storage ?? '0'),
        0n,
      );
    return count(inClass);
  }
  if (resource.resource === 'services' && resource.group === '') {
    const services = objects as Service[];
    if (name === 'services.loadbalancers')
      return count(services.filter((service) => service.spec?.type === 'LoadBalancer'));
    if (name === 'services.nodeports')
      return services.reduce((total, service) => {
        const type = service.spec?.type;
        const allocates =
          type === 'NodePort' ||
          (type === 'LoadBalancer' && service.spec?.allocateLoadBalancerNodePorts !== false);
        return total + (allocates ? BigInt(service.spec?.ports?.length ?? 0) * parseQuantity('1') : 0n);
      }, 0n);
  }
  return count(objects);
}
