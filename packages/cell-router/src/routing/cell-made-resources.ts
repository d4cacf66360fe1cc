import type { CellularResource } from './cellular-resources.ts';

/**
 * Ring-placed resources that a cell's own controllers also make: a CronJob's Jobs, and (where
 * PersistentVolumeClaims are cellular) a StatefulSet's or an ephemeral volume's claims. Such an object is
 * where its owner's cell made it, under a name the ring places elsewhere; it carries its cell's native
 * controller reference. A request for one that its ring cell does not have looks for it in the other cells
 * (proxy/object-requests.ts); lists and watches show it from where it is (collections/copy-choice.ts).
 */
const ALSO_MADE_BY_CELLS: readonly CellularResource[] = [
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
