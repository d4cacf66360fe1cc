import type { WatchEvent } from '@cellfed/controller-kit';

/** An object as a cell's watch sends it: the object itself, or a Table of one row (`kubectl get -w`). */
export interface WatchedObject {
  kind?: string;
  metadata?: {
    namespace?: string;
    name?: string;
    resourceVersion?: string;
    /** Which of two copies of a cell-made object is shown (absent from protobuf objects: a tie). */
    creationTimestamp?: string;
    labels?: Record<string, string>;
    /** Read only for their `controller` flags (see madeByItsCell). */
    ownerReferences?: readonly unknown[];
  };
  /** A Table event (kubectl get -w) carries its object in its one row. */
  rows?: { object?: WatchedObject }[];
}

/** The metadata of a watched object; of a Table event, its row's object (the Table has only a version). */
export function watchedMeta(object: WatchedObject): NonNullable<WatchedObject['metadata']> {
  if (object.kind === 'Table')
    return {
      ...object.rows?.[0]?.object?.metadata,
      resourceVersion:
        object.metadata?.resourceVersion ?? object.rows?.[0]?.object?.metadata?.resourceVersion,
    };
  return object.metadata ?? {};
}

/**
 * An event as the client is shown it. `source`: the source whose copy `object` is, when that is not the cell
 * whose event it answers (the new copy shown when a move completes, the copy that remains when a cell-made
 * one goes): owner uids in it are that source's.
 */
export type ShownEvent = WatchEvent & { readonly source?: string };
