import type { GroupVersionResource } from '@cellfed/hashing';

import type { KubeObject } from '@cellfed/controller-kit';

/**
 * On an old copy the controller has quiesced: the spec fields it changed, as they were (JSON), so the old
 * copy can be brought back by hand within `deleteAfter` if a move has to be undone.
 */
export const QUIESCED_ANNOTATION = 'cellfed.io/quiesced-from';

/** What quiescing a workload changes in its spec. */
type Change = { field: 'replicas'; value: 0 } | { field: 'suspend'; value: true };

/**
 * The change that stops an old copy's own cell from running it once its move is committed: the workloads
 * that scale go to 0 replicas (their pods go), Jobs and CronJobs are suspended (a CronJob would otherwise
 * start every run twice, once in each cell, until the old copy is deleted). DaemonSets cannot be scaled and
 * are left running; other resources run nothing.
 */
function changeFor(resource: Pick<GroupVersionResource, 'group' | 'resource'>): Change | undefined {
  switch (`${resource.group}/${resource.resource}`) {
    case 'apps/deployments':
    case 'apps/statefulsets':
    case 'apps/replicasets':
    case '/replicationcontrollers':
      return { field: 'replicas', value: 0 };
    case 'batch/jobs':
    case 'batch/cronjobs':
      return { field: 'suspend', value: true };
    default:
      return undefined;
  }
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
  const change = changeFor(resource);
  if (!change || old.metadata.annotations?.[QUIESCED_ANNOTATION] !== undefined) return undefined;
  const spec = (old as { spec?: Record<string, unknown> }).spec ?? {};
  const before = spec[change.field];
  if (before === change.value) return undefined;
  return {
    metadata: {
      resourceVersion: old.metadata.resourceVersion,
      annotations: { [QUIESCED_ANNOTATION]: JSON.stringify({ [change.field]: before ?? null }) },
    },
    spec: { [change.field]: change.value },
  };
}
