import type { GroupVersionResource } from '@cellfed/api';
import { isNotFound, type KubeClient } from '@cellfed/controller-kit';

interface ApiResourceList {
  resources?: { name?: string; kind?: string; namespaced?: boolean }[];
}

/** The resource an owner reference's apiVersion and kind name. */
export interface OwnerKind extends GroupVersionResource {
  readonly namespaced: boolean;
}

/**
 * Which resource an owner reference names (a reference says `apiVersion` and `kind`; caches and paths are by
 * resource), from the router control plane's discovery: it serves every kind clients can name, cellular or
 * not. One GET per group version, kept; asked again when a kind is not found (a CRD installed since), at
 * most every `refreshMs`.
 */
export class OwnerKinds {
  private readonly known = new Map<string, { at: number; kinds: Promise<Map<string, OwnerKind>> }>();
  private readonly controlPlane: Pick<KubeClient, 'request'>;
  private readonly now: () => number;
  private readonly refreshMs: number;

  constructor(controlPlane: Pick<KubeClient, 'request'>, now: () => number, refreshMs = 30_000) {
    this.controlPlane = controlPlane;
    this.now = now;
    this.refreshMs = refreshMs;
  }

  /** The resource of `kind` in `apiVersion`; undefined when the control plane does not serve it. */
  async resolve(apiVersion: string, kind: string): Promise<OwnerKind | undefined> {
    let entry = this.known.get(apiVersion);
    if (entry) {
      const found = (await entry.kinds).get(kind);
      if (found || this.now() - entry.at < this.refreshMs) return found;
    }
    entry = { at: this.now(), kinds: this.discover(apiVersion) };
    this.known.set(apiVersion, entry);
    // A failed discovery is asked again next time.
    entry.kinds.catch(() => this.known.delete(apiVersion));
    return (await entry.kinds).get(kind);
  }

  private async discover(apiVersion: string): Promise<Map<string, OwnerKind>> {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const list = await this.controlPlane.request<ApiResourceList>('GET', path).catch((error: unknown) => {
      // A group version the control plane does not serve names no kind.
      if (isNotFound(error)) return { resources: [] };
      throw error;
    });
    const kinds = new Map<string, OwnerKind>();
    for (const resource of list.resources ?? []) {
      if (!resource.name || !resource.kind || resource.name.includes('/')) continue;
      kinds.set(resource.kind, {
        group: group!,
        version: version!,
        resource: resource.name,
        namespaced: resource.namespaced === true,
      });
    }
    return kinds;
  }
}
