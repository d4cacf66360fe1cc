/**
 * A control-plane object deleted through the router with orphan propagation may own objects in the cells
 * whose references cellfed holds (held-owners.ts). Kubernetes' collector in the control plane cannot see
 * them, and cellfed's collector does not watch the control plane: it finds such an owner gone on its next
 * look and would delete the dependents. So the router records the orphaning first, as an Event on the
 * object with this reason, and the collector reads it before it takes a gone owner's dependents: it
 * removes the reference instead. Events expire (kube-apiserver's `--event-ttl`, 1 h by default), long
 * after the collector's next look.
 */
export const ORPHANED_DEPENDENTS_REASON = 'OrphanHeldDependents';

/**
 * Where the collector looks for that record: the object's Events by uid, read as core/v1 Events (the
 * router writes events.k8s.io/v1 ones; both are the same objects). Cluster-scoped objects' Events are in
 * `default`.
 */
export function orphanedOwnerEventsPath(namespace: string | undefined, uid: string): string {
  const selector = `involvedObject.uid=${uid},reason=${ORPHANED_DEPENDENTS_REASON}`;
  return `/api/v1/namespaces/${namespace || 'default'}/events?fieldSelector=${encodeURIComponent(selector)}&limit=1`;
}
