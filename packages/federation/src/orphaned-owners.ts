import { CELL_ROUTER_CONTROLLER, ORPHANED_DEPENDENTS_REASON } from '@cellfed/api';

/**
 * Where cellfed's collector looks for the router's record of an orphaning delete of a control-plane owner
 * (see @cellfed/api's ORPHANED_DEPENDENTS_REASON): the object's Events by uid, read as core/v1 Events (the
 * router writes events.k8s.io/v1 ones; both are the same objects). Cluster-scoped objects' Events are in
 * `default`. Only the router's own Events count: core/v1 shows an Event's reporting controller as
 * `reportingComponent`.
 */
export function orphanedOwnerEventsPath(namespace: string | undefined, uid: string): string {
  const selector = `involvedObject.uid=${uid},reason=${ORPHANED_DEPENDENTS_REASON},reportingComponent=${CELL_ROUTER_CONTROLLER}`;
  return `/api/v1/namespaces/${namespace || 'default'}/events?fieldSelector=${encodeURIComponent(selector)}&limit=1`;
}
