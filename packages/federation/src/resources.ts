import type { ResourceRef } from './resource-path.ts';

/**
 * The resources more than one of cellfed's parts reads or writes, each described once (a resource only
 * one part uses is described beside that part's code).
 */
export const NAMESPACES: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'namespaces',
  namespaced: false,
};
export const CONFIG_MAPS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  namespaced: true,
};
export const SERVICES: ResourceRef = { group: '', version: 'v1', resource: 'services', namespaced: true };
export const SECRETS: ResourceRef = { group: '', version: 'v1', resource: 'secrets', namespaced: true };
export const CLAIMS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'persistentvolumeclaims',
  namespaced: true,
};
export const RESOURCE_QUOTAS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'resourcequotas',
  namespaced: true,
};
export const LEASES: ResourceRef = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  namespaced: true,
};
export const CRDS: ResourceRef = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  namespaced: false,
};
