import type { GroupVersionResource } from '@cellfed/api';
import type { RouteDecision, RoutingTable } from '@cellfed/hashing';

import { resourcePath, resourceName } from './resource-path.ts';
import { keyCodec, type Key } from './key-codec.ts';

/** One cellular object, wherever its copies are: the unit a migration or a backup works on. */
export interface CellularObjectRef {
  readonly resource: GroupVersionResource;
  readonly namespace: string;
  readonly name: string;
}

/** The REST path of the object in a cell. */
export function objectPath(ref: CellularObjectRef): string {
  return resourcePath({ ...ref.resource, namespaced: ref.namespace !== '' }, ref.namespace, ref.name);
}

/** The REST path of the collection the object is created in (its namespace's, or the cluster's). */
export function collectionPath(ref: CellularObjectRef): string {
  return resourcePath({ ...ref.resource, namespaced: ref.namespace !== '' }, ref.namespace);
}

/**
 * The work-queue key of an object: `deployments.apps/namespace/name`. It names no cell: the migration or the
 * backup of an object touches two cells, and one key for both means one worker at a time for the object.
 */
export const OBJECT_KEYS = keyCodec(['resource', 'namespace', 'name'], { mayBeEmpty: ['namespace'] });
/** A key of {@link OBJECT_KEYS}: `resource` is the resource's name (`deployments.apps`). */
export type ObjectKey = Key<'resource' | 'namespace' | 'name'>;

export const objectKeyOf = (ref: CellularObjectRef): ObjectKey => ({
  resource: resourceName(ref.resource),
  namespace: ref.namespace,
  name: ref.name,
});

export function formatObjectKey(ref: CellularObjectRef): string {
  return OBJECT_KEYS.format(objectKeyOf(ref));
}

/** The object a key names, `resources` mapping `resource.group` to the cellular resource. */
export function objectRefOf(
  key: ObjectKey,
  resources: ReadonlyMap<string, GroupVersionResource>,
): CellularObjectRef | undefined {
  const resource = resources.get(key.resource);
  // A resource no longer cellular: nothing to do for it.
  return resource ? { resource, namespace: key.namespace, name: key.name } : undefined;
}

/** Inverse of {@link formatObjectKey}; `resources` maps `resource.group` to the cellular resource. */
export function parseObjectKey(
  key: string,
  resources: ReadonlyMap<string, GroupVersionResource>,
): CellularObjectRef | undefined {
  return objectRefOf(OBJECT_KEYS.parse(key), resources);
}

/** Namespaces each cell has of its own, for its own components: nothing in them is the federation's. */
export const CELL_SYSTEM_NAMESPACES: ReadonlySet<string> = new Set([
  'kube-system',
  'kube-public',
  'kube-node-lease',
]);

/**
 * Outside the system namespaces, the objects every apiserver makes for itself, by resource (`group/resource`):
 * the `kube-root-ca.crt` ConfigMap its controller manager puts in every namespace, and its own
 * `default/kubernetes` Service with that Service's Endpoints and EndpointSlice.
 */
const APISERVER_OWN_OBJECTS: ReadonlyMap<string, { readonly namespace?: string; readonly name: string }> =
  new Map([
    ['/configmaps', { name: 'kube-root-ca.crt' }],
    ['/services', { namespace: 'default', name: 'kubernetes' }],
    ['/endpoints', { namespace: 'default', name: 'kubernetes' }],
    ['discovery.k8s.io/endpointslices', { namespace: 'default', name: 'kubernetes' }],
  ]);

/**
 * Objects each cell makes for itself and that never move: everything in its system namespaces (the
 * apiserver's and controller manager's ConfigMaps and Leases), and {@link APISERVER_OWN_OBJECTS}. Every
 * apiserver, the control plane's too, has its own copy of each.
 */
export function isCellOwnObject(ref: CellularObjectRef): boolean {
  if (CELL_SYSTEM_NAMESPACES.has(ref.namespace)) return true;
  const own = APISERVER_OWN_OBJECTS.get(`${ref.resource.group}/${ref.resource.resource}`);
  return own !== undefined && own.name === ref.name && (own.namespace ?? ref.namespace) === ref.namespace;
}

/**
 * The name of the object of `resource` each apiserver makes for itself in `namespace` outside the system
 * namespaces (`kube-root-ca.crt` for ConfigMaps anywhere, `kubernetes` for Services in `default`), if any;
 * with no namespace, whether the resource has such objects at all.
 */
export function cellOwnObjectName(
  resource: Pick<GroupVersionResource, 'group' | 'resource'>,
  namespace?: string,
): string | undefined {
  const own = APISERVER_OWN_OBJECTS.get(`${resource.group}/${resource.resource}`);
  if (!own || (namespace !== undefined && own.namespace !== undefined && own.namespace !== namespace))
    return undefined;
  return own.name;
}

/** Where an object is and where it goes under `table`: its key, with its namespace's shard-by label, routed. */
export function routeOf(
  table: RoutingTable,
  ref: CellularObjectRef,
  namespaceLabels: (namespace: string) => Record<string, string> | undefined,
): RouteDecision {
  return table.route(table.keyOf(ref, namespaceLabels(ref.namespace)));
}
