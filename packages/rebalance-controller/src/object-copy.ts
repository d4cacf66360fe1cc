import { COPIED_FROM_ANNOTATION, FENCED_AT_ANNOTATION, MIGRATED_AT_ANNOTATION } from '@cellfed/api';
import { REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import {
  portableObject,
  without,
  type KubeObject,
  type ObjectMeta,
  type ObjectRef,
  type PortableObject,
} from '@cellfed/controller-kit';

/** What goes to the new cell: the object to create, then its status through the status subresource. */
export type CellCopy = PortableObject;

/**
 * The new copy of `object`, read in cell `source`: the object as another cell can take it (see
 * `portableObject`), the migration marks of the old copy dropped and the copy marked as not yet committed.
 */
export function copyForNewCell(object: KubeObject, ref: ObjectRef, source: string): CellCopy {
  const portable = portableObject(object, ref);
  const { labels: oldLabels, annotations: oldAnnotations, ...metadata } = portable.object.metadata;
  const labels = without(oldLabels, [REBALANCE_STATUS_LABEL]);
  const annotations = {
    ...without(oldAnnotations, [FENCED_AT_ANNOTATION, MIGRATED_AT_ANNOTATION]),
    [COPIED_FROM_ANNOTATION]: `${source}/${object.metadata.uid ?? ''}`,
  };
  const copied: ObjectMeta = {
    ...metadata,
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    annotations,
  };
  return { object: { ...portable.object, metadata: copied }, status: portable.status };
}
