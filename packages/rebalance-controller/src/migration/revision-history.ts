import {
  type GroupVersionResource,
  COPIED_FROM_ANNOTATION,
  FENCED_AT_ANNOTATION,
  MIGRATED_AT_ANNOTATION,
} from '@cellfed/api';
import { type KubeObject, ownerReferencesOf, without, type CellularObjectRef } from '@cellfed/federation';

const REPLICA_SETS: GroupVersionResource = { group: 'apps', version: 'v1', resource: 'replicasets' };
const CONTROLLER_REVISIONS: GroupVersionResource = {
  group: 'apps',
  version: 'v1',
  resource: 'controllerrevisions',
};

/**
 * Where a workload's controller keeps its past templates: a Deployment's ReplicaSets, a StatefulSet's and a
 * DaemonSet's ControllerRevisions. The cell's controllers make them, so they do not move by hash; without
 * them a moved workload's new cell would number its revisions afresh and `kubectl rollout undo` would find
 * nothing to go back to.
 */
const HISTORY_RESOURCES: ReadonlyMap<string, GroupVersionResource> = new Map([
  ['apps/deployments', REPLICA_SETS],
  ['apps/statefulsets', CONTROLLER_REVISIONS],
  ['apps/daemonsets', CONTROLLER_REVISIONS],
]);

/** The resource holding the revision history of objects of `resource`, if it keeps one. */
export function historyResourceOf(
  resource: Pick<GroupVersionResource, 'group' | 'resource'>,
): GroupVersionResource | undefined {
  return HISTORY_RESOURCES.get(`${resource.group}/${resource.resource}`);
}

/** The label selector (matchLabels only) that narrows a list of `owner`'s history; '' lists everything. */
export function historySelector(owner: Readonly<KubeObject>): string {
  const matchLabels = (owner as { spec?: { selector?: { matchLabels?: Record<string, string> } } }).spec
    ?.selector?.matchLabels;
  return Object.entries(matchLabels ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

/**
 * The items of `listed` that are `owner`'s history (their controller is `owner`), newest revision first:
 * copied in that order, the current one is in the new cell before its controller would make it afresh.
 */
export function historyOf(listed: readonly KubeObject[], owner: Readonly<KubeObject>): KubeObject[] {
  const uid = owner.metadata.uid;
  return listed
    .filter((item) =>
      ownerReferencesOf(item.metadata).some((reference) => reference.controller && reference.uid === uid),
    )
    .sort((a, b) => revisionOf(b) - revisionOf(a));
}

/**
 * The copy of one history item for the new cell, controlled by the new copy of its owner: the new cell's
 * controller takes it as its own (the garbage collector deletes it with the owner, were the move called
 * off). A ReplicaSet comes with no replicas: the Deployment's controller scales the current one up.
 */
export function historyCopy(item: Readonly<KubeObject>, owner: Readonly<KubeObject>): KubeObject {
  const { metadata, status: _status, ...rest } = item as KubeObject & { status?: unknown };
  const annotations = without(metadata.annotations, [
    COPIED_FROM_ANNOTATION,
    FENCED_AT_ANNOTATION,
    MIGRATED_AT_ANNOTATION,
  ]);
  const copy: KubeObject = {
    ...rest,
    metadata: {
      name: metadata.name!,
      namespace: metadata.namespace!,
      ...(metadata.labels ? { labels: metadata.labels } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ownerReferences: [
        {
          apiVersion: owner.apiVersion!,
          kind: owner.kind!,
          name: owner.metadata.name!,
          uid: owner.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
  };
  if (item.kind === 'ReplicaSet') copy.spec = { ...(item.spec as object), replicas: 0 };
  return copy;
}

/** Where the copy of one history item goes. */
export function historyRef(history: GroupVersionResource, item: Readonly<KubeObject>): CellularObjectRef {
  return { resource: history, namespace: item.metadata.namespace ?? '', name: item.metadata.name ?? '' };
}

/** A ReplicaSet's revision annotation, a ControllerRevision's revision field; 0 when it has neither. */
function revisionOf(item: Readonly<KubeObject>): number {
  const revision =
    (item as { revision?: unknown }).revision ??
    item.metadata.annotations?.['deployment.kubernetes.io/revision'];
  const parsed = Number(revision);
  return Number.isFinite(parsed) ? parsed : 0;
}
