import {
  type CellSetSpec,
  type GroupVersionResource,
  MIRROR_HASH_ANNOTATION,
  MIRRORED_LABEL,
} from '@cellfed/api';
import { isNotFound, readIfExists, type KubeClient } from '@cellfed/controller-kit';
import {
  APPLY_PATCH,
  METADATA_LIST,
  resourcePath,
  SECRETS,
  type KubeList,
  type KubeObject,
  CELL_SYSTEM_NAMESPACES,
  FENCE_POLICY_NAME,
  celUserIsOneOf,
} from '@cellfed/federation';

import { RebalanceError, RebalanceErrorCode } from '../errors.ts';
import { inParallel } from '../in-parallel.ts';
import { userMarks } from '../followers/follower-copy.ts';
import { contentHash, MIRROR_FIELD_MANAGER, MIRRORED_VALUE } from '../mirror-marks.ts';

type Client = Pick<KubeClient, 'request'>;

/** Every namespace's ServiceAccounts: a cell's controllers need them to create a workload's pods. */
export const SERVICE_ACCOUNTS: GroupVersionResource = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
};

/**
 * The Secrets never mirrored, by type: legacy ServiceAccount tokens (each apiserver's token controller makes
 * and signs its own), bootstrap tokens (per apiserver too) and helm's release records (bookkeeping of the
 * control plane's client, large and many).
 */
const MIRRORED_SECRETS_SELECTOR = [
  'kubernetes.io/service-account-token',
  'bootstrap.kubernetes.io/token',
  'helm.sh/release.v1',
]
  .map((type) => `type!=${type}`)
  .join(',');

/** The field selector the mirror reads a resource's control-plane objects with, if any. */
export function mirrorSelector(resource: GroupVersionResource): string | undefined {
  return sameResource(resource, SECRETS) ? MIRRORED_SECRETS_SELECTOR : undefined;
}

/**
 * What the mirror keeps in every cell: the CellSet's shared resources, and ServiceAccounts always (a pod
 * naming one its cell does not have is refused, and the workload never runs) unless the CellSet makes them
 * cellular or lists them already.
 */
export function mirroredResources(spec: Pick<CellSetSpec, 'sharedResources' | 'cellularResources'>) {
  const named = (list: readonly GroupVersionResource[]) =>
    list.some((gvr) => sameResource(gvr, SERVICE_ACCOUNTS));
  return named(spec.sharedResources) || named(spec.cellularResources)
    ? spec.sharedResources
    : [...spec.sharedResources, SERVICE_ACCOUNTS];
}

/**
 * Makes a cell hold every object of the CellSet's shared resources as the control plane has it (RBAC,
 * PriorityClasses, quotas, …): each is server-side applied with a hash of its content, so an unchanged one
 * is not written again, and one the mirror made is deleted when the control plane's is gone. What each
 * apiserver makes for itself is left alone ({@link isCellOwn}). Answers the number of writes.
 */
export async function mirrorSharedObjects(
  controlPlane: Client,
  cell: Client,
  resources: readonly GroupVersionResource[],
  signal: AbortSignal,
  parallelism: number,
  /** cellfed's components' user names in the cell, which mirrored admission objects exempt. */
  components?: readonly string[],
): Promise<number> {
  let writes = 0;
  for (const resource of resources) {
    // Listed cluster-wide, which for a namespaced resource is every namespace.
    const collection = resourcePath({ ...resource, namespaced: false });
    const fieldSelector = mirrorSelector(resource);
    // A default shared resource an older control plane does not serve has nothing to mirror.
    // (A 404 for a collection: the apiserver does not serve the resource.)
    const source = await readIfExists<KubeList & { kind?: string }>(controlPlane, collection, {
      ...(fieldSelector ? { query: { fieldSelector } } : {}),
      signal,
    });
    if (!source) continue;
    const inCell = await readIfExists<KubeList>(cell, collection, {
      accept: METADATA_LIST,
      query: { labelSelector: `${MIRRORED_LABEL}=${MIRRORED_VALUE}` },
      signal,
    });
    if (!inCell) {
      // A policy the cell cannot hold would not be applied there: refuse to call the cell mirrored.
      if ((source.items ?? []).some((object) => !isCellOwn(object, resource))) throw notServed(resource);
      continue;
    }
    // An empty metadata list comes back with `items: null`.
    const have = new Map((inCell.items ?? []).map((item) => [placeOf(item), item.metadata]));
    const kind = source.kind?.replace(/List$/, '') ?? '';
    const apiVersion = resource.group ? `${resource.group}/${resource.version}` : resource.version;
    const tasks: (() => Promise<unknown>)[] = [];
    const wanted = new Set<string>();
    for (const object of source.items ?? []) {
      const { namespace = '', name = '' } = object.metadata;
      if (isCellOwn(object, resource) || object.metadata.deletionTimestamp) continue;
      wanted.add(placeOf(object));
      const copy = mirroredCopy({ ...object, apiVersion, kind }, components);
      const current = have.get(placeOf(object));
      if (
        current?.annotations?.[MIRROR_HASH_ANNOTATION] === copy.metadata.annotations?.[MIRROR_HASH_ANNOTATION]
      )
        continue;
      const path = resourcePath({ ...resource, namespaced: namespace !== '' }, namespace, name);
      tasks.push(() =>
        cell.request('PATCH', path, {
          body: JSON.stringify(copy),
          contentType: APPLY_PATCH,
          query: { fieldManager: MIRROR_FIELD_MANAGER, force: true },
          signal,
        }),
      );
    }
    for (const [place, metadata] of have) {
      if (wanted.has(place) || metadata.deletionTimestamp) continue;
      const path = resourcePath(
        { ...resource, namespaced: Boolean(metadata.namespace) },
        metadata.namespace ?? '',
        metadata.name ?? '',
      );
      tasks.push(() =>
        cell.request('DELETE', path, { signal }).catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        }),
      );
    }
    await inParallel(tasks, parallelism);
    writes += tasks.length;
  }
  return writes;
}

/** The match condition each mirrored admission policy and webhook gets in a cell. */
const EXEMPT_COMPONENTS_CONDITION = 'cellfed.io/not-cellfed';

/**
 * An admission policy or webhook configuration that leaves cellfed's components' own writes alone: moving
 * or promoting an object creates it anew in a cell, which a policy made after the object would refuse (or a
 * mutating one change) although no client wrote anything; the fence, commit and quiesce patches and the
 * fence probe must not depend on what users put in the cells; nor may the namespaces and quota shares the
 * router writes as itself. Other objects are as they are.
 */
function exemptingComponents<T extends Omit<KubeObject, 'metadata'>>(
  object: T,
  components: readonly string[],
): T {
  const condition = { name: EXEMPT_COMPONENTS_CONDITION, expression: `!(${celUserIsOneOf(components)})` };
  const withCondition = <M extends { matchConditions?: unknown[] }>(matching: M): M => ({
    ...matching,
    matchConditions: [...(matching.matchConditions ?? []), condition],
  });
  const kind = (object as { kind?: string }).kind;
  if (kind === 'ValidatingAdmissionPolicy' || kind === 'MutatingAdmissionPolicy') {
    const spec = (object as { spec?: { matchConditions?: unknown[] } }).spec ?? {};
    return { ...object, spec: withCondition(spec) };
  }
  if (kind === 'ValidatingWebhookConfiguration' || kind === 'MutatingWebhookConfiguration') {
    const webhooks = (object as { webhooks?: { matchConditions?: unknown[] }[] }).webhooks;
    return webhooks ? { ...object, webhooks: webhooks.map(withCondition) } : object;
  }
  return object;
}

function notServed(resource: GroupVersionResource): RebalanceError {
  const name = [resource.resource, resource.group].filter(Boolean).join('.');
  return new RebalanceError(
    RebalanceErrorCode.SharedResourceNotServed,
    `the cell does not serve ${name} ${resource.version}, of which the control plane has objects to mirror: ` +
      "upgrade the cell, or leave the resource out of the CellSet's sharedResources",
  );
}

/**
 * What the mirror applies for a control-plane object: its content without what the apiserver keeps (uid,
 * versions, owners, status) or cellfed's marks (`cellfed.io/…`), labelled as mirrored and annotated with a
 * hash of that content. An admission
 * policy or webhook configuration exempts `components`, cellfed's components' user names in the cell (see
 * {@link exemptingComponents}).
 */
export function mirroredCopy(object: KubeObject, components?: readonly string[]): KubeObject {
  const { metadata, status: _status, ...exempted } = object as KubeObject & { status?: unknown };
  const rest = components === undefined ? exempted : exemptingComponents(exempted, components);
  const { name, namespace } = metadata;
  // cellfed's own marks on a copy are cellfed's to set (a user's would steer the cell's controllers).
  const labels = userMarks(metadata.labels);
  const annotations = userMarks(metadata.annotations);
  const content = { ...rest, metadata: { name, namespace, labels, annotations } };
  const hash = contentHash(content);
  return {
    ...rest,
    metadata: {
      name,
      ...(namespace ? { namespace } : {}),
      labels: { ...labels, [MIRRORED_LABEL]: MIRRORED_VALUE },
      annotations: { ...annotations, [MIRROR_HASH_ANNOTATION]: hash },
    },
  } as KubeObject;
}

/**
 * Objects every apiserver makes for itself: the RBAC defaults (`kubernetes.io/bootstrapping`), anything
 * named `system:…`, the built-in PriorityClasses (`system-node-critical`, `system-cluster-critical`), and
 * whatever is in a system namespace. And cellfed's own: its charts' objects (`app.kubernetes.io/part-of:
 * cellfed`; the control plane's are the cellfed chart's, each cell's the cellfed-cell chart's, under the same
 * names) and the write fence each cell has. Each cell has its own; mirroring the control plane's over them
 * (or deleting them with it) would break the cell (the control plane's binding of the rebalance controller's
 * ClusterRole, mirrored, took the cell's own identity off it).
 */
export function isCellOwn(object: KubeObject, resource: GroupVersionResource): boolean {
  const { namespace = '', name = '', labels } = object.metadata;
  return (
    CELL_SYSTEM_NAMESPACES.has(namespace) ||
    name.startsWith('system:') ||
    (resource.resource === 'priorityclasses' && name.startsWith('system-')) ||
    name === FENCE_POLICY_NAME ||
    labels?.['kubernetes.io/bootstrapping'] !== undefined ||
    labels?.[PART_OF_LABEL] === PART_OF_CELLFED
  );
}

const PART_OF_LABEL = 'app.kubernetes.io/part-of';
const PART_OF_CELLFED = 'cellfed';

/** Whether two resources are the same, whatever version each names. */
export function sameResource(one: GroupVersionResource, other: GroupVersionResource): boolean {
  return one.group === other.group && one.resource === other.resource;
}

function placeOf(object: Pick<KubeObject, 'metadata'>): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}
