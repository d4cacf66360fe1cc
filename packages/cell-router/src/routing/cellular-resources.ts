import type { GroupVersionResource } from '@cellfed/api';

/** A resource as the router tells cellular from global: its group and name, any version. */
export type CellularResource = Pick<GroupVersionResource, 'group' | 'resource'>;

/** Which resources live in cells: matched on group and resource, any version (as the CellSet keys them). */
export class CellularResources {
  private readonly set: ReadonlySet<string>;
  private readonly groups: ReadonlySet<string>;

  constructor(resources: readonly Pick<GroupVersionResource, 'group' | 'resource'>[]) {
    this.set = new Set(resources.map((gvr) => `${gvr.group}/${gvr.resource}`));
    this.groups = new Set(resources.map((gvr) => gvr.group));
  }

  has(group: string, resource: string): boolean {
    return this.set.has(`${group}/${resource}`);
  }

  /** Whether any resource of `group` is listed. */
  hasGroup(group: string): boolean {
    return this.groups.has(group);
  }
}
