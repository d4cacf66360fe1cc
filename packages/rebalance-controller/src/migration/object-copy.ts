import {
  COPIED_FROM_ANNOTATION,
  FENCED_AT_ANNOTATION,
  HELD_SPEC_ANNOTATION,
  MIGRATED_AT_ANNOTATION,
  QUIESCED_ANNOTATION,
} from '@cellfed/api';
import { REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import {
  type KubeObject,
  type ObjectMeta,
  portableObject,
  without,
  type CellularObjectRef,
  type PortableObject,
} from '@cellfed/federation';

import { heldUntilCommit } from './quiesce.ts';

/** What goes to the new cell: the object to create, then its status through the status subresource. */
export type CellCopy = PortableObject;

/**
 * The new copy of `object`, read in cell `source`: the object as another cell can take it (see
 * `portableObject`), the migration marks of the old copy dropped and the copy marked as not yet committed.
 * A Job or CronJob is created suspended, what the commit sets back recorded in `held-spec` (see
 * `heldUntilCommit`); an old copy's record of its own quiesce (`quiesced-from`) is not carried over.
 */
export function copyForNewCell(object: KubeObject, ref: CellularObjectRef, source: string): CellCopy {
  const portable = portableObject(object, ref);
  const { labels: oldLabels, annotations: oldAnnotations, ...metadata } = portable.object.metadata;
  const labels = without(oldLabels, [REBALANCE_STATUS_LABEL]);
  const held = heldUntilCommit(ref.resource, portable.object);
  const annotations = {
    ...without(oldAnnotations, [FENCED_AT_ANNOTATION, MIGRATED_AT_ANNOTATION, QUIESCED_ANNOTATION]),
    [COPIED_FROM_ANNOTATION]: `${source}/${object.metadata.uid ?? ''}`,
    // An uncommitted source held already (suspend true) keeps its record: the commit restores from it.
    ...(held ? { [HELD_SPEC_ANNOTATION]: JSON.stringify(held.held) } : {}),
  };
  const copied: ObjectMeta = {
    ...metadata,
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    annotations,
  };
  const spec = (portable.object as { spec?: Record<string, unknown> }).spec;
  return {
    object: { ...portable.object, metadata: copied, ...(held ? { spec: { ...spec, ...held.spec } } : {}) },
    status: portable.status,
  };
}
