import { ORIGIN_CREATED_ANNOTATION, ORIGIN_UID_ANNOTATION } from '@cellfed/api';

import type { ObjectMeta } from './kube-object.ts';

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
