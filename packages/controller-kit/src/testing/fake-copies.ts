import { type GroupVersionResource, FOLLOWER_LABEL } from '@cellfed/api';
import { type KubeObject, type ObjectMeta, type CellularObjectRef } from '@cellfed/federation';

import type { CopiesView } from '../objects/cell-objects.ts';

import type { FakeCell } from './fake-cell.ts';

/**
 * The cells' caches of one resource, read straight from fake cells (always current): what CellObjects
 * gives a controller, follower copies left out as its informers' label selector leaves them out.
 */
export function fakeCopies(
  cells: readonly FakeCell[],
  resource: GroupVersionResource,
): CopiesView & { objectIn(cell: string, ref: CellularObjectRef): KubeObject | undefined } {
  const ofResource = (path: string) => path.split('/').at(-2) === resource.resource;
  const each = (visit: (cell: string, ref: CellularObjectRef, metadata: ObjectMeta) => void) => {
    for (const cell of cells) {
      for (const [path, object] of cell.objects) {
        if (!ofResource(path) || object.metadata.labels?.[FOLLOWER_LABEL] !== undefined) continue;
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
    objectIn(id, ref) {
      const cell = cells.find((candidate) => candidate.id === id);
      for (const [path, object] of cell?.objects ?? [])
        if (
          ofResource(path) &&
          object.metadata.namespace === ref.namespace &&
          object.metadata.name === ref.name
        )
          return structuredClone(object);
      return undefined;
    },
    eachCopy: each,
    synced: () => true,
  };
}
