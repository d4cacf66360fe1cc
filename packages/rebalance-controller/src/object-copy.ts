import { REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import type { KubeObject, ObjectMeta } from '@cellfed/controller-kit';

import { COPIED_FROM_ANNOTATION, FENCED_AT_ANNOTATION, MIGRATED_AT_ANNOTATION } from './migration-marks.ts';
import type { ObjectRef } from './object-ref.ts';

/** What goes to the new cell: the object to create, then its status through the status subresource. */
export interface CellCopy {
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
 * The new copy of `object`, read in cell `source`: labels, annotations, finalizers and managed fields (so
 * server-side apply ownership moves with the object), every top-level field but `status`; server fields
 * dropped, the migration marks of the old copy dropped and the copy marked as not yet committed.
 *
 * What belongs to the old cell is dropped too: owner references (their uids name objects of the old cell, and
 * the new cell's garbage collector would delete the copy as an orphan), a Service's allocated cluster IPs
 * (the new cell allocates its own), a Job's generated selector and the old uid in its template labels.
 */
export function copyForNewCell(object: KubeObject, ref: ObjectRef, source: string): CellCopy {
  const { metadata, status, ...rest } = object as KubeObject & { status?: unknown };
  const labels = without(metadata.labels, [REBALANCE_STATUS_LABEL]);
  const annotations = {
    ...without(metadata.annotations, [FENCED_AT_ANNOTATION, MIGRATED_AT_ANNOTATION]),
    [COPIED_FROM_ANNOTATION]: `${source}/${metadata.uid ?? ''}`,
  };
  const copied: ObjectMeta = {
    ...without(structuredClone(metadata), [...SERVER_METADATA, 'ownerReferences', 'labels', 'annotations']),
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    annotations,
  };
  const body = structuredClone(rest) as Record<string, unknown>;
  const spec = body.spec as Record<string, unknown> | undefined;
  if (spec && ref.resource.group === '' && ref.resource.resource === 'services')
    body.spec = forgetClusterIps(spec);
  if (spec && ref.resource.group === 'batch' && ref.resource.resource === 'jobs')
    body.spec = forgetJobSelector(spec);
  return { object: { ...body, metadata: copied } as KubeObject, status };
}

/** A copy of `record` without `keys`. */
function without<T>(record: Record<string, T> | undefined, keys: readonly string[]): Record<string, T> {
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
