import { type ResourceRef } from '@cellfed/federation';

import type { CellularResources } from '../routing/cellular-resources.ts';

/** One resource of an API group version, as discovery lists it. */
export interface DiscoveredResource {
  readonly name: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** Discovery of one group version (`v1`, `apps/v1`) in the control plane: its resources. */
export type Discover = (groupVersion: string) => Promise<readonly DiscoveredResource[]>;

/** `group/version` or `version`, as Kubernetes names them (`apps/v1`, `v1`, `example.com/v1beta2`). */
const GROUP_VERSION =
  /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\/)?v[0-9]+(?:(?:alpha|beta)[0-9]+)?$/;

/**
 * Which owner kinds are cellular: an owner reference names a kind (`apps/v1` `Deployment`), the CellSet
 * names resources (`apps` `deployments`). Discovery of the control plane tells the one from the other, once
 * per group version; a failed discovery is asked again next time.
 */
export class CellularKinds {
  private readonly discovered = new Map<string, Promise<readonly DiscoveredResource[]>>();
  private readonly discover: Discover;
  private readonly cellular: () => CellularResources | undefined;

  constructor(discover: Discover, cellular: () => CellularResources | undefined) {
    this.discover = discover;
    this.cellular = cellular;
  }

  /** The cellular resource of objects of `kind` in `apiVersion`; undefined when it is not cellular. */
  async resourceOf(apiVersion: string, kind: string): Promise<ResourceRef | undefined> {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    // An owner reference is a caller's text: only a group version of a group the CellSet lists is looked up
    // (a path of the caller's choosing is never asked for as the router, and what is kept stays bounded).
    if (!GROUP_VERSION.test(apiVersion) || !this.cellular()?.hasGroup(group)) return undefined;
    let resources = this.discovered.get(apiVersion);
    if (!resources) {
      resources = this.discover(apiVersion);
      this.discovered.set(apiVersion, resources);
      resources.catch(() => this.discovered.delete(apiVersion));
    }
    let found: DiscoveredResource | undefined;
    try {
      // Subresources (`deployments/scale`) share the kind of what they are part of: skip them.
      found = (await resources).find((resource) => resource.kind === kind && !resource.name.includes('/'));
    } catch {
      return undefined;
    }
    if (!found || !this.cellular()?.has(group, found.name)) return undefined;
    return { group, version, resource: found.name, namespaced: found.namespaced };
  }
}
