import { ORIGIN_CREATED_ANNOTATION, ORIGIN_UID_ANNOTATION } from '@cellfed/api';

import type { KubeObject, ObjectMeta } from './kube-object.ts';
import { originCreated, originUid } from './object-identity.ts';
import type { CellularObjectRef } from './object-ref.ts';

/** An object ready to be created in another apiserver, and its status to write after through `/status`. */
export interface PortableObject {
  readonly object: KubeObject;
  readonly status: unknown;
}

// Fields the apiserver owns: a new copy gets its own.
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
] as const;
const JOB_UID_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];

/**
 * `object` as another cell can take it: labels, annotations, finalizers and managed fields (so server-side
 * apply ownership moves with the object), every top-level field but `status`, which is returned apart; the
 * uid and creation time clients know it by kept as annotations (the copy gets its own); the server fields
 * dropped,
 * and what belongs to the cell it was read in: owner references (their uids name
 * objects of that cell, and the new cell's garbage collector would delete the copy as an orphan), a
 * Service's allocated cluster IPs (the new cell allocates its own), a Job's generated selector and the old
 * uid in its template labels. Never changes `object`.
 */
export function portableObject(object: Readonly<KubeObject>, ref: CellularObjectRef): PortableObject {
  const { metadata, status, ...rest } = structuredClone(object) as KubeObject & { status?: unknown };
  const copied: ObjectMeta = without(metadata, [...SERVER_METADATA, 'ownerReferences']);
  const uid = originUid(metadata);
  if (uid) copied.annotations = { ...copied.annotations, [ORIGIN_UID_ANNOTATION]: uid };
  const created = originCreated(metadata);
  if (created) copied.annotations = { ...copied.annotations, [ORIGIN_CREATED_ANNOTATION]: created };
  const body = rest as Record<string, unknown>;
  const spec = body.spec as Record<string, unknown> | undefined;
  if (spec && ref.resource.group === '' && ref.resource.resource === 'services')
    body.spec = forgetClusterIps(spec);
  if (spec && ref.resource.group === 'batch' && ref.resource.resource === 'jobs')
    body.spec = forgetJobSelector(spec);
  return { object: { ...body, metadata: copied } as KubeObject, status };
}

/** A copy of `record` without `keys`. */
export function without<T>(
  record: Record<string, T> | undefined,
  keys: readonly string[],
): Record<string, T> {
  return Object.fromEntries(Object.entries(record ?? {}).filter(([key]) => !keys.includes(key)));
}

function forgetClusterIps(spec: Record<string, unknown>): Record<string, unknown> {
  // Headless stays headless; any other address was allocated by the old cell.
  return spec.clusterIP === 'None' ? spec : without(spec, ['clusterIP', 'clusterIPs']);
}

function forgetJobSelector(spec: Record<string, unknown>): Record<string, unknown> {
  if (spec.manualSelector === true) return spec;
  const template = spec.template as { metadata?: { labels?: Record<string, string> } } | undefined;
  const labels = template?.metadata?.labels;
  return {
    ...without(spec, ['selector']),
    ...(template && labels
      ? {
          template: {
            ...template,
            metadata: { ...template.metadata, labels: without(labels, JOB_UID_LABELS) },
          },
        }
      : {}),
  };
}
