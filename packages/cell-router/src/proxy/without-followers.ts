import { NOT_FOLLOWER_SELECTOR } from '@cellfed/federation';

import { withRequirement } from '../request/selector-terms.ts';

/**
 * `pathAndQuery` with its label selector narrowed to leave follower copies out (see controller-kit's
 * pod-references.ts). A deletecollection that reaches every cell would otherwise delete the copies a cell
 * keeps for its pods and list them among the deleted items; the rebalance controller removes a follower
 * itself once its object is gone.
 */
export function withoutFollowers(pathAndQuery: string): string {
  return withSelector(pathAndQuery, 'labelSelector', NOT_FOLLOWER_SELECTOR);
}

/** `pathAndQuery` with `requirement` added to its `labelSelector` or `fieldSelector` (both must hold). */
export function withSelector(
  pathAndQuery: string,
  param: 'labelSelector' | 'fieldSelector',
  requirement: string,
): string {
  const url = new URL(pathAndQuery, 'http://router.invalid');
  url.searchParams.set(param, withRequirement(url.searchParams.get(param), requirement));
  return `${url.pathname}${url.search}`;
}
