import { QUIESCED_ANNOTATION, QUIESCED_NODE_LABEL, type GroupVersionResource } from '@cellfed/api';
import { type KubeObject } from '@cellfed/federation';

type Spec = Record<string, unknown>;

/** What quiescing a workload changes in its spec: the merge patch, and the fields it replaces as they were. */
interface Change {
  readonly spec: Spec;
  readonly was: Spec;
}

const scaledToZero = (spec: Spec): Change | undefined =>
  spec.replicas === 0 ? undefined : { spec: { replicas: 0 }, was: { replicas: spec.replicas ?? null } };

const suspended = (spec: Spec): Change | undefined =>
  spec.suspend === true ? undefined : { spec: { suspend: true }, was: { suspend: spec.suspend ?? null } };

function onNoNode(spec: Spec): Change | undefined {
  const pod = (spec.template as { spec?: { nodeSelector?: Record<string, string> } } | undefined)?.spec;
  if (pod?.nodeSelector?.[QUIESCED_NODE_LABEL] !== undefined) return undefined;
  return {
    spec: { template: { spec: { nodeSelector: { [QUIESCED_NODE_LABEL]: 'true' } } } },
    was: { nodeSelector: pod?.nodeSelector ?? null },
  };
}

/**
 * The change that stops an old copy's own cell from running it once its move is committed: the workloads
 * that scale go to 0 replicas (their pods go), Jobs and CronJobs are suspended (a CronJob would otherwise
 * start every run twice, once in each cell, until the old copy is deleted), a DaemonSet selects no node.
 * Other resources run nothing.
 */
function changeFor(
  resource: Pick<GroupVersionResource, 'group' | 'resource'>,
): ((spec: Spec) => Change | undefined) | undefined {
  switch (`${resource.group}/${resource.resource}`) {
    case 'apps/deployments':
    case 'apps/statefulsets':
    case 'apps/replicasets':
    case '/replicationcontrollers':
      return scaledToZero;
    case 'batch/jobs':
    case 'batch/cronjobs':
      return suspended;
    case 'apps/daemonsets':
      return onNoNode;
    default:
      return undefined;
  }
}

/**
 * What a new copy of `object` is created without, so that its cell runs nothing of it before the move is
 * committed; undefined when nothing is held back. Jobs and CronJobs are created suspended: a Job's pods would
 * otherwise run in both cells at once, and a finished Job, created before its status is copied, would run
 * again. The commit sets the field back (`held` is the merge patch that does). Workloads that scale are not
 * held: their new pods come up beside the old ones, as in a rolling update, and the old go once committed.
 */
export function heldUntilCommit(
  resource: Pick<GroupVersionResource, 'group' | 'resource'>,
  object: KubeObject,
): { readonly spec: Spec; readonly held: Spec } | undefined {
  // The resources quiesced by suspending them: Jobs and CronJobs.
  if (changeFor(resource) !== suspended) return undefined;
  const change = suspended((object as { spec?: Spec }).spec ?? {});
  return change ? { spec: change.spec, held: change.was } : undefined;
}

/** Whether old copies of `resource` run anything to stop (without reading one). */
export function quiesces(resource: Pick<GroupVersionResource, 'group' | 'resource'>): boolean {
  return changeFor(resource) !== undefined;
}

/**
 * The JSON merge patch that quiesces `old` (an old copy labelled `migrated`), or undefined when it needs
 * none: nothing runs for its resource, it is quiesced already, or it is at rest anyway. The patch carries
 * the old copy's resourceVersion, so a copy that changed meanwhile is read again first.
 */
export function quiescePatch(
  resource: Pick<GroupVersionResource, 'group' | 'resource'>,
  old: KubeObject,
): Record<string, unknown> | undefined {
  const changeOf = changeFor(resource);
  if (!changeOf || old.metadata.annotations?.[QUIESCED_ANNOTATION] !== undefined) return undefined;
  const change = changeOf((old as { spec?: Spec }).spec ?? {});
  if (!change) return undefined;
  return {
    metadata: {
      resourceVersion: old.metadata.resourceVersion,
      annotations: { [QUIESCED_ANNOTATION]: JSON.stringify(change.was) },
    },
    spec: change.spec,
  };
}
