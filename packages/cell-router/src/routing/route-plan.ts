import { CELL_MADE_RESOURCES, type CellSetSpec } from '@cellfed/api';
import type { Access, RouteDecision } from '@cellfed/hashing';
import {
  compileCellSet,
  type CellSetGeneration,
  CELL_SYSTEM_NAMESPACES,
  cellOwnObjectName,
  isCellOwnObject,
} from '@cellfed/federation';

import type { RequestInfo, ResourceRequestInfo } from '../request/request-info.ts';
import { serviceUnavailable, type KubeStatus } from '../status/kube-status.ts';
import { CONTROL_PLANE_SOURCE, alsoMadeByCells } from './cell-made-resources.ts';
import { CellularResources, type CellularResource } from './cellular-resources.ts';

/**
 * What the router knows of the federation when it plans a request; swapped as a whole on a CellSet change.
 * Collection requests fan out to its `liveCells`; its `generation` is published so the rebalance controller
 * can wait for every router.
 */
export interface RoutingState extends CellSetGeneration {
  readonly cellular: CellularResources;
  /** What the cells' controllers make (see cell-made-resources.ts), less what the CellSet routes otherwise. */
  readonly cellMade: CellularResources;
}

/** The routing state of a validated CellSet spec. */
export function routingState(spec: CellSetSpec, generation: number): RoutingState {
  return {
    ...compileCellSet(spec, generation),
    cellular: new CellularResources(spec.cellularResources),
    cellMade: new CellularResources(
      CELL_MADE_RESOURCES.filter(
        (made) =>
          ![...spec.cellularResources, ...spec.sharedResources].some(
            (listed) => listed.group === made.group && listed.resource === made.resource,
          ),
      ),
    ),
  };
}

/**
 * How a resource's objects are placed: by the ring (cellular), or wherever a cell's controllers made them
 * (cell-made: looked for in every live cell and the control plane); in a system namespace, only what each
 * apiserver makes for itself, of which clients see the control plane's (`control-plane`: read from it alone).
 */
export type Placement = 'ring' | 'anywhere' | 'control-plane';

/**
 * The sources a collection of `resource` placed by `placement` is read from: ids of live cells, and
 * {@link CONTROL_PLANE_SOURCE} for what the control plane holds of it: its cell-made objects (Events its
 * controllers write), and the objects each apiserver makes for itself (`kube-root-ca.crt`,
 * `default/kubernetes`), of which clients see the control plane's (see collections/own-objects.ts).
 */
export function collectionSources(
  state: RoutingState,
  placement: Placement,
  resource: CellularResource,
): readonly string[] {
  if (placement === 'control-plane') return CONTROL_PLANE_ONLY;
  return placement === 'ring' && cellOwnObjectName(resource) === undefined
    ? state.liveCells
    : [CONTROL_PLANE_SOURCE, ...state.liveCells];
}

const CONTROL_PLANE_ONLY: readonly string[] = [CONTROL_PLANE_SOURCE];

/**
 * The decision for one request, before any I/O (kcp's front-proxy: resolve first, then let the proxy
 * only read the decision).
 */
export type RoutePlan =
  /**
   * Not cellular: discovery, OpenAPI, namespaces, RBAC, CRDs, … are the control plane's. Nor is what every
   * apiserver makes for itself (`cell-own`: `kube-root-ca.crt`, `default/kubernetes`, `kube-system`): the
   * control plane's own copy is the one clients get, never one of the cells'.
   */
  | { readonly kind: 'control-plane'; readonly reason: 'non-resource' | 'not-cellular' | 'cell-own' }
  /** One cellular object named by the path: the routing rule picks old or new cell (see decision.case). */
  | {
      readonly kind: 'object';
      readonly info: ResourceRequestInfo;
      readonly decision: RouteDecision;
      readonly access: Access;
      /**
       * The `Down` cell the key belonged to: the cell the decision names holds its backup until the backup
       * controller promotes it, and serves reads from it meanwhile (see proxy/pending-backups.ts).
       */
      readonly failedOverFrom?: string;
      /**
       * Whether a cell's controllers also make objects of this resource (a CronJob's Jobs): one its ring
       * cell does not have may be where another cell made it (routing/cell-made-resources.ts).
       */
      readonly alsoMadeByCells: boolean;
    }
  /**
   * One cell-made object named by the path: the source holding it is looked for (see routing/cell-made.ts);
   * `ringCell` takes a create, and answers for an object no source holds.
   */
  | { readonly kind: 'cell-made'; readonly info: ResourceRequestInfo; readonly ringCell: string }
  /** A create whose name is only in the body: read the name, then plan again with it. */
  | { readonly kind: 'name-in-body'; readonly info: ResourceRequestInfo }
  /** A collection: every source answers, the router merges. */
  | { readonly kind: 'all-cells'; readonly info: ResourceRequestInfo; readonly placement: Placement }
  /** Answer at once with this Status. */
  | { readonly kind: 'reject'; readonly status: KubeStatus };

/** Labels of a namespace in the control plane, for its `cellfed.io/shard-by` override. */
export type NamespaceLabels = (namespace: string) => Readonly<Record<string, string>> | undefined;

/**
 * Plans a request. Pure: the same request and state always give the same plan. `name` overrides the
 * path's name (a create, once the name is read from the body).
 */
export function planRoute(
  info: RequestInfo,
  state: RoutingState | undefined,
  namespaceLabels: NamespaceLabels = () => undefined,
  name?: string,
): RoutePlan {
  if (!info.isResourceRequest) return { kind: 'control-plane', reason: 'non-resource' };
  if (!state) {
    // Without a CellSet the router cannot tell cellular from global: refuse rather than guess.
    return { kind: 'reject', status: serviceUnavailable('the router has not loaded a valid CellSet yet', 1) };
  }
  const placement: Placement | undefined = state.cellular.has(info.apiGroup, info.resource)
    ? 'ring'
    : state.cellMade.has(info.apiGroup, info.resource)
      ? 'anywhere'
      : undefined;
  if (!placement) return { kind: 'control-plane', reason: 'not-cellular' };
  const objectName = name ?? info.name;
  if (info.verb === 'list' || info.verb === 'watch' || info.verb === 'deletecollection') {
    // A system namespace holds only what each apiserver makes for itself: the control plane's is the one.
    // Its lists and watches are the control plane's alone, merged as the cells' are so that its objects
    // carry their versions as in every other list (a deletecollection goes to it as it is).
    if (CELL_SYSTEM_NAMESPACES.has(info.namespace))
      return info.verb === 'deletecollection'
        ? { kind: 'control-plane', reason: 'cell-own' }
        : { kind: 'all-cells', info, placement: 'control-plane' };
    // A list or watch narrowed to one name by field selector still fans out: the object may be in any cell
    // while it migrates, and the merge shows it once.
    return { kind: 'all-cells', info, placement };
  }
  if (objectName === '') {
    return info.verb === 'create' ? { kind: 'name-in-body', info } : { kind: 'all-cells', info, placement };
  }
  if (isCellOwn(info, info.namespace, objectName)) return { kind: 'control-plane', reason: 'cell-own' };
  const key = state.table.keyOf(
    { namespace: info.namespace, name: objectName },
    namespaceLabels(info.namespace),
  );
  if (placement === 'anywhere')
    return {
      kind: 'cell-made',
      info: name === undefined ? info : { ...info, name },
      ringCell: state.table.route(key).newCell,
    };
  const failedOverFrom = state.table.failedOverFrom(key);
  return {
    kind: 'object',
    info: name === undefined ? info : { ...info, name },
    decision: state.table.route(key),
    access: info.verb === 'get' ? 'read' : 'write',
    ...(failedOverFrom ? { failedOverFrom } : {}),
    alsoMadeByCells: info.verb !== 'create' && alsoMadeByCells(info.apiGroup, info.resource),
  };
}

/** Whether `namespace/name` of the request's resource is one each apiserver makes for itself. */
function isCellOwn(info: ResourceRequestInfo, namespace: string, name: string): boolean {
  return isCellOwnObject({
    resource: { group: info.apiGroup, version: info.apiVersion, resource: info.resource },
    namespace,
    name,
  });
}
