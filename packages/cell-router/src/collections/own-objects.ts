import { cellOwnObjectName, isCellOwnObject } from '@cellfed/federation';

import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import type { CellularResource } from '../routing/cellular-resources.ts';
import type { Placement } from '../routing/route-plan.ts';

/**
 * What a collection shows of one source's copy of `namespace/name`, before the routing rule: each apiserver
 * makes some objects for itself (`kube-root-ca.crt` in every namespace, `default/kubernetes`), and clients of
 * the router see the control plane's, the apiserver they talk to through it — never a cell's, so nothing
 * appears twice or changes when the CellSet does. `show` and `hide` decide; `route` leaves the copy to the
 * routing rule (a ring-placed object's cell, a cell-made object's holder).
 */
export function ownObjectView(
  resource: CellularResource,
  placement: Placement,
  source: string,
  namespace: string,
  name: string,
): 'show' | 'hide' | 'route' {
  if (isCellOwnObject({ resource: { ...resource, version: '' }, namespace, name }))
    return source === CONTROL_PLANE_SOURCE ? 'show' : 'hide';
  // The control plane holds no ring-placed object of the federation's: only its own ones are read from it.
  if (placement === 'ring' && source === CONTROL_PLANE_SOURCE) return 'hide';
  return 'route';
}

/**
 * The field-selector term a read of `source` needs for `resource` placed by `placement`: of a ring-placed
 * resource, the control plane holds nothing clients see but what it makes for itself, so only that is read
 * (`metadata.name=kube-root-ca.crt`); undefined for every other source and placement.
 */
export function ownObjectsOnly(
  resource: CellularResource,
  placement: Placement,
  source: string,
): string | undefined {
  if (source !== CONTROL_PLANE_SOURCE || placement !== 'ring') return undefined;
  const own = cellOwnObjectName(resource);
  return own === undefined ? undefined : `metadata.name=${own}`;
}

/**
 * Whether a collection request of `resource` in `namespace` (undefined: all namespaces, read whole) asks
 * the control plane at all: of a ring-placed resource it holds only what it makes for itself, so not where
 * it makes nothing (Services outside `default`).
 */
export function asksControlPlane(
  resource: CellularResource,
  placement: Placement,
  namespace: string | undefined,
): boolean {
  return (
    placement !== 'ring' || namespace === undefined || cellOwnObjectName(resource, namespace) !== undefined
  );
}
