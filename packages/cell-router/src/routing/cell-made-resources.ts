import type { CellularResource } from './cellular-resources.ts';

/**
 * What a cell's own controllers make for the workloads it runs: a Deployment's ReplicaSets and their Pods, a
 * StatefulSet's ControllerRevisions, a Service's Endpoints and EndpointSlices, the Events about all of them.
 * They are born in the cell of their owner under names the router never sees chosen, so the ring does not
 * place them and the rebalance controller does not move them (the owner's new cell makes its own). The
 * router finds them where they are: each of them in every live cell and the control plane (whose own
 * controllers write Events too). A resource the CellSet lists as cellular or shared is routed as listed.
 */
export const CELL_MADE_RESOURCES: readonly CellularResource[] = [
  { group: '', resource: 'pods' },
  { group: 'apps', resource: 'replicasets' },
  { group: 'apps', resource: 'controllerrevisions' },
  { group: '', resource: 'endpoints' },
  { group: 'discovery.k8s.io', resource: 'endpointslices' },
  { group: '', resource: 'events' },
  { group: 'events.k8s.io', resource: 'events' },
];

/**
 * Ring-placed resources that a cell's own controllers also make: a CronJob's Jobs, and (where
 * PersistentVolumeClaims are cellular) a StatefulSet's or an ephemeral volume's claims. Such an object is
 * where its owner's cell made it, under a name the ring places elsewhere; it carries its cell's native
 * controller reference. A request for one that its ring cell does not have looks for it in the other cells
 * (proxy/object-requests.ts); lists and watches show it from where it is (collections/copy-choice.ts).
 */
export const ALSO_MADE_BY_CELLS: readonly CellularResource[] = [
  { group: 'batch', resource: 'jobs' },
  { group: '', resource: 'persistentvolumeclaims' },
];

/** Whether a cell's own controllers also make objects of `resource` (see {@link ALSO_MADE_BY_CELLS}). */
export function alsoMadeByCells(group: string, resource: string): boolean {
  return ALSO_MADE_BY_CELLS.some((made) => made.group === group && made.resource === resource);
}

/**
 * Where the router reads and writes the control plane's part of a cell-made resource's collection, beside
 * the cells: not a DNS label, so no cell can have this id.
 */
export const CONTROL_PLANE_SOURCE = ':control-plane';

/** A collection source as messages name it: `cell ID`, or `the control plane`. */
export function sourceName(source: string): string {
  return source === CONTROL_PLANE_SOURCE ? 'the control plane' : `cell ${source}`;
}
