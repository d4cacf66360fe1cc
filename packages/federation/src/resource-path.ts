import type { GroupVersionResource } from '@cellfed/api';

/** A resource of the API, with whether its objects live in namespaces. */
export interface ResourceRef {
  group: string;
  version: string;
  /** Plural, lowercase: `deployments`. */
  resource: string;
  namespaced: boolean;
}

/** `apps/v1/deployments`, `v1/configmaps`: how logs and metrics name a resource. */
export function resourceId(ref: Pick<ResourceRef, 'group' | 'version' | 'resource'>): string {
  return ref.group ? `${ref.group}/${ref.version}/${ref.resource}` : `${ref.version}/${ref.resource}`;
}

/**
 * The REST path of a resource's collection (optionally in one namespace) or of one object:
 * `/apis/apps/v1/namespaces/ns/deployments/web`, `/api/v1/configmaps`.
 */
export function resourcePath(ref: ResourceRef, namespace?: string, name?: string): string {
  const root = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  const scope = ref.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const object = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  return `${root}${scope}/${ref.resource}${object}`;
}

/** `deployments.apps` or `configmaps`, as kubectl names a resource. */
export function resourceName(resource: Pick<GroupVersionResource, 'group' | 'resource'>): string {
  return resource.group ? `${resource.resource}.${resource.group}` : resource.resource;
}
