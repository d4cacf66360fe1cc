import { type OwnerReference } from '@cellfed/federation';

/** What a strategic merge patch says of `metadata.ownerReferences` (patchStrategy merge, patchMergeKey uid). */
export interface OwnerListPatch {
  /** The patch's list; null removes the list. */
  readonly list?: readonly Record<string, unknown>[] | null;
  /** `$setElementOrder/ownerReferences`: the order of the result, by uid. */
  readonly order?: readonly { uid?: unknown }[];
}

/**
 * The owner list after a strategic merge patch, as kube-apiserver computes it: each element merges into the
 * one with its uid or is added; `{"$patch": "delete", "uid": …}` removes one; a `{"$patch": "replace"}`
 * element makes the patch's list the whole list; `$setElementOrder` orders the result.
 */
export function mergeOwnerList(
  current: readonly OwnerReference[],
  patch: OwnerListPatch,
): Record<string, unknown>[] {
  if (patch.list === null) return [];
  const elements = patch.list ?? [];
  const replace = elements.some((element) => element.$patch === 'replace');
  const result = new Map<string, Record<string, unknown>>(
    replace ? [] : current.map((owner) => [owner.uid, { ...owner }]),
  );
  for (const element of elements) {
    const { $patch, ...fields } = element;
    if ($patch === 'replace') continue;
    const uid = typeof fields.uid === 'string' ? fields.uid : undefined;
    if (uid === undefined) continue;
    if ($patch === 'delete') result.delete(uid);
    else result.set(uid, { ...result.get(uid), ...fields });
  }
  let merged = [...result.values()];
  if (patch.order) {
    const rank = new Map(patch.order.map((element, index) => [element.uid, index]));
    const position = (owner: Record<string, unknown>) => rank.get(owner.uid) ?? rank.size;
    merged = merged
      .map((owner, index) => ({ owner, index }))
      .sort((a, b) => position(a.owner) - position(b.owner) || a.index - b.index)
      .map(({ owner }) => owner);
  }
  return merged;
}
