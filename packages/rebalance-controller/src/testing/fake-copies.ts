import type { ObjectMeta, CopiesView, ObjectRef } from '@cellfed/controller-kit';
import type { GroupVersionResource } from '@cellfed/hashing';

import type { FakeCell } from './fake-cell.ts';

/** The cells' caches, read straight from fake cells (always current). */
export function fakeCopies(cells: readonly FakeCell[], resource: GroupVersionResource): CopiesView {
  const each = (visit: (cell: string, ref: ObjectRef, metadata: ObjectMeta) => void) => {
    for (const cell of cells) {
      for (const object of cell.objects.values()) {
        const { namespace = '', name = '' } = object.metadata;
        visit(cell.id, { resource, namespace, name }, object.metadata);
      }
    }
  };
  return {
    copiesOf(ref) {
      const found = new Map<string, ObjectMeta>();
      each((cell, candidate, metadata) => {
        if (candidate.namespace === ref.namespace && candidate.name === ref.name)
          found.set(cell, structuredClone(metadata));
      });
      return found;
    },
    eachCopy: each,
    synced: () => true,
  };
}
