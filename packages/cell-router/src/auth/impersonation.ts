import type { KubeClient } from '@cellfed/controller-kit';

import type { UserInfo } from './user-info.ts';

const IMPERSONATE_USER = 'impersonate-user';
const IMPERSONATE_GROUP = 'impersonate-group';
const IMPERSONATE_UID = 'impersonate-uid';
const IMPERSONATE_EXTRA = 'impersonate-extra-';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
const AUTHENTICATION_GROUP = 'authentication.k8s.io';

/** The headers that make an apiserver act as `user` (the router's own identity must be allowed to). */
export function impersonationHeaders(user: UserInfo): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { 'Impersonate-User': user.username };
  if (user.uid) headers['Impersonate-Uid'] = user.uid;
  const groups = user.groups.filter((group) => group !== 'system:authenticated');
  if (groups.length > 0) headers['Impersonate-Group'] = groups;
  for (const [key, values] of Object.entries(user.extra)) {
    headers[`Impersonate-Extra-${encodeURIComponent(key)}`] = values;
  }
  return headers;
}

/** A client's own Impersonate-* headers, read as kube-apiserver reads them. */
export type ImpersonationRequest =
  /** `user` as the apiserver acts as them; `askedGroups` as the client named them (checked). */
  | { readonly kind: 'user'; readonly user: UserInfo; readonly askedGroups: readonly string[] }
  /** Groups, extras or a uid without a user: kube-apiserver refuses them too. */
  | { readonly kind: 'incomplete'; readonly reason: string };

/** Whether the client asked to impersonate someone itself; undefined if it did not. */
export function requestedImpersonation(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): ImpersonationRequest | undefined {
  // Node joins a repeated header's values with ", ": one list either way (no empty values).
  const list = (value: string | string[] | undefined) =>
    (value === undefined ? [] : Array.isArray(value) ? value : [value])
      .flatMap((one) => one.split(',').map((v) => v.trim()))
      .filter(Boolean);
  // One value, whole (kube-apiserver takes the first); an empty one is none, as kube-apiserver reads it.
  const single = (value: string | string[] | undefined) =>
    (Array.isArray(value) ? value[0] : value) || undefined;
  const groups = list(headers[IMPERSONATE_GROUP]);
  const uid = single(headers[IMPERSONATE_UID]);
  const extra: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(IMPERSONATE_EXTRA))
      extra[unescapedKey(name.slice(IMPERSONATE_EXTRA.length))] = list(value);
  }
  const user = single(headers[IMPERSONATE_USER]);
  if (user === undefined) {
    const asked = [
      ...(groups.length > 0 ? ['Impersonate-Group'] : []),
      ...(Object.keys(extra).length > 0 ? ['Impersonate-Extra-*'] : []),
      ...(uid !== undefined ? ['Impersonate-Uid'] : []),
    ];
    return asked.length > 0
      ? { kind: 'incomplete', reason: `${asked.join(' and ')} without Impersonate-User` }
      : undefined;
  }
  const serviceAccount = serviceAccountOf(user);
  // A service account impersonated without groups has its own, as kube-apiserver gives them.
  const impliedGroups =
    serviceAccount && groups.length === 0
      ? ['system:serviceaccounts', `system:serviceaccounts:${serviceAccount.namespace}`]
      : groups;
  return {
    kind: 'user',
    user: { username: user, ...(uid !== undefined ? { uid } : {}), groups: impliedGroups, extra },
    askedGroups: groups,
  };
}

/** One `impersonate` permission an impersonation needs (a SubjectAccessReview's resourceAttributes). */
export interface ImpersonationCheck {
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name: string;
}

/**
 * What kube-apiserver's impersonation filter checks before it acts as `target`: the user (a service
 * account's `system:serviceaccount:<namespace>:<name>` as that service account, and only that), each group
 * asked for, each value of each extra, and the uid. Groups a service account is given, not asked for, are not
 * checked.
 */
export function impersonationChecks(target: UserInfo, askedGroups: readonly string[]): ImpersonationCheck[] {
  const serviceAccount = serviceAccountOf(target.username);
  return [
    serviceAccount
      ? { group: '', resource: 'serviceaccounts', ...serviceAccount }
      : { group: '', resource: 'users', name: target.username },
    ...askedGroups.map((group) => ({ group: '', resource: 'groups', name: group })),
    ...Object.entries(target.extra).flatMap(([key, values]) =>
      values.map((value) => ({
        group: AUTHENTICATION_GROUP,
        resource: 'userextras',
        subresource: key,
        name: value,
      })),
    ),
    ...(target.uid !== undefined
      ? [{ group: AUTHENTICATION_GROUP, resource: 'uids', name: target.uid }]
      : []),
  ];
}

interface SubjectAccessReview {
  status?: { allowed?: boolean; reason?: string };
}

/**
 * Honours a client's own Impersonate-* headers only if the control plane allows the caller every
 * permission kube-apiserver would check ({@link impersonationChecks}, SubjectAccessReviews of verb
 * `impersonate`): answers who to act as, or why not, worded as kube-apiserver words it.
 */
export async function authorizeImpersonation(
  controlPlane: Pick<KubeClient, 'request'>,
  caller: UserInfo,
  asked: ImpersonationRequest,
): Promise<{ user: UserInfo } | { denied: string }> {
  if (asked.kind === 'incomplete') return { denied: asked.reason };
  const checks = impersonationChecks(asked.user, asked.askedGroups);
  const allowed = await Promise.all(
    checks.map(async (check) => {
      const review = await controlPlane.request<SubjectAccessReview>(
        'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        {
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: caller.username,
              ...(caller.uid ? { uid: caller.uid } : {}),
              groups: caller.groups,
              extra: caller.extra,
              resourceAttributes: {
                verb: 'impersonate',
                group: check.group,
                resource: check.resource,
                ...(check.subresource ? { subresource: check.subresource } : {}),
                ...(check.namespace ? { namespace: check.namespace } : {}),
                name: check.name,
              },
            },
          },
        },
      );
      return review.status?.allowed === true;
    }),
  );
  const denied = checks.find((_, index) => !allowed[index]);
  return denied ? { denied: forbiddenMessage(caller, denied) } : { user: asked.user };
}

/** kube-apiserver's words for a refused impersonation (its Forbidden for the check that failed). */
function forbiddenMessage(caller: UserInfo, check: ImpersonationCheck): string {
  const qualified = check.group ? `${check.resource}.${check.group}` : check.resource;
  const resource = check.subresource ? `${check.resource}/${check.subresource}` : check.resource;
  const scope = check.namespace ? `in the namespace "${check.namespace}"` : 'at the cluster scope';
  return `${qualified} "${check.name}" is forbidden: User "${caller.username}" cannot impersonate resource "${resource}" in API group "${check.group}" ${scope}`;
}

/** An extra's key from its header name: percent-decoded, or as it is when that fails (as kube-apiserver). */
function unescapedKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** The namespace and name of a service account's username; undefined for any other user. */
function serviceAccountOf(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const [namespace, name, ...rest] = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
  return namespace && name && rest.length === 0 ? { namespace, name } : undefined;
}
