import type { RequestInfo } from '../request/request-info.ts';
import { RETRY_SOON, refusal, type Refusal } from '../routing/destination.ts';
import { forbidden, serviceUnavailable } from '../status/kube-status.ts';
import { publicErrorMessage } from '../status/public-error.ts';
import type { AccessAttributes, AccessReviewer } from './access-reviewer.ts';
import type { UserInfo } from './user-info.ts';

/**
 * Whether the caller may do what its request asks, by the control plane's RBAC (which the cells mirror):
 * undefined if it may, else the refusal one kube-apiserver would give (403), or a 503 when nobody could be
 * asked. The router asks it only before it acts for the caller on its own identity (a namespace it creates
 * in a cell, a record it writes) or tells it something the cells have not told it (a fence, a restore, an
 * unreadable cell): everything else goes on as the caller, and the cell decides.
 */
export type Authorize = () => Promise<Refusal | undefined>;

/** The SubjectAccessReview attributes of a request, as kube-apiserver's authorizer gets them. */
function accessAttributes(info: RequestInfo): AccessAttributes {
  if (!info.isResourceRequest) return { verb: info.verb, path: info.path };
  return {
    verb: info.verb,
    group: info.apiGroup,
    resource: info.resource,
    ...(info.subresource ? { subresource: info.subresource } : {}),
    ...(info.namespace ? { namespace: info.namespace } : {}),
    ...(info.name ? { name: info.name } : {}),
  };
}

/** One request's {@link Authorize}: the review is asked once however often the answer is needed. */
export function requestAuthorization(
  reviewer: Pick<AccessReviewer, 'allowed'>,
  user: UserInfo,
  info: RequestInfo,
): Authorize {
  let decided: Promise<Refusal | undefined> | undefined;
  const attributes = accessAttributes(info);
  return () =>
    (decided ??= reviewer.allowed(user, attributes).then(
      (allowed) =>
        allowed ? undefined : refusal(forbidden(forbiddenMessage(user.username, attributes)), 'forbidden'),
      (error: unknown) => ({
        ...refusal(
          serviceUnavailable(
            `the router could not check the request's authorization (${publicErrorMessage(error)}); retry`,
            1,
          ),
          'authorization-unavailable',
        ),
        headers: RETRY_SOON,
      }),
    ));
}

/** kube-apiserver's words for a request its authorizer refused. */
export function forbiddenMessage(username: string, attributes: AccessAttributes): string {
  if ('path' in attributes)
    return `forbidden: User "${username}" cannot ${attributes.verb} path "${attributes.path}"`;
  const { verb, group, resource, subresource, namespace, name } = attributes;
  const qualified = group ? `${resource}.${group}` : resource;
  const object = name ? `${qualified} "${name}"` : qualified;
  const scope = namespace ? `in the namespace "${namespace}"` : 'at the cluster scope';
  return `${object} is forbidden: User "${username}" cannot ${verb} resource "${subresource ? `${resource}/${subresource}` : resource}" in API group "${group}" ${scope}`;
}
