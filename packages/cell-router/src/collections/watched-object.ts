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
