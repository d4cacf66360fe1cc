import type { GroupVersionResource } from '@cellfed/api';
import type { KubeClient } from '@cellfed/controller-kit';

interface ApiResourceList {
  resources?: { name?: string }[];
}

/**
 * Whether a resource has a `status` subresource in a cell, from the cell's discovery (one GET per group
 * version, kept): a status written through the main resource is dropped by the apiserver, and a PUT to a
 * subresource that does not exist would be a 404 indistinguishable from a missing object.
 */
export class StatusSubresources {
  private readonly known = new Map<string, Promise<Set<string>>>();

  async has(cell: string, client: Pick<KubeClient, 'request'>, gvr: GroupVersionResource): Promise<boolean> {
    const groupVersion = gvr.group ? `${gvr.group}/${gvr.version}` : gvr.version;
    const key = `${cell}/${groupVersion}`;
    let names = this.known.get(key);
    if (!names) {
      const path = gvr.group ? `/apis/${groupVersion}` : `/api/${gvr.version}`;
      names = client
        .request<ApiResourceList>('GET', path)
        .then((list) => new Set((list.resources ?? []).map((resource) => resource.name ?? '')));
      this.known.set(key, names);
      // A failed discovery is asked again next time.
      names.catch(() => this.known.delete(key));
    }
    return (await names).has(`${gvr.resource}/status`);
  }

  /** Forgets what a cell said (it was re-engaged, perhaps as a different apiserver). */
  forget(cell: string): void {
    for (const key of [...this.known.keys()]) if (key.startsWith(`${cell}/`)) this.known.delete(key);
  }
}
