import type { ObjectMeta } from '../kube/kube-object.ts';

/**
 * The uid clients know an object by, on every copy made of it in another cell (a move, a promoted backup):
 * each apiserver gives what it creates a uid of its own, and owner references written before the copy name
 * the first one.
 */
export const ORIGIN_UID_ANNOTATION = 'cellfed.io/uid';

/** Likewise the creation time clients know: the first copy's `metadata.creationTimestamp`. */
export const ORIGIN_CREATED_ANNOTATION = 'cellfed.io/created';

/**
 * On a new copy until its move is committed: `cell/uid` of the copy it was made from. A copy that still
 * carries it is not the object yet (if its source is gone, it goes too), so only the rebalance controller
 * ever sets or removes it.
 */
export const COPIED_FROM_ANNOTATION = 'cellfed.io/copied-from';

/** The uid clients know the object by: the first copy's, or its own when it was never copied. */
export function originUid(metadata: Readonly<Pick<ObjectMeta, 'uid' | 'annotations'>>): string | undefined {
  return metadata.annotations?.[ORIGIN_UID_ANNOTATION] ?? metadata.uid;
}

/** Whether `uid` names this copy: its own uid, or the one clients know it by. */
export function isKnownAs(metadata: Readonly<Pick<ObjectMeta, 'uid' | 'annotations'>>, uid: string): boolean {
  return metadata.uid === uid || metadata.annotations?.[ORIGIN_UID_ANNOTATION] === uid;
}

/** The creation time clients know the object by: the first copy's, or its own when it was never copied. */
export function originCreated(
  metadata: Readonly<Pick<ObjectMeta, 'creationTimestamp' | 'annotations'>>,
): string | undefined {
  return metadata.annotations?.[ORIGIN_CREATED_ANNOTATION] ?? metadata.creationTimestamp;
}
