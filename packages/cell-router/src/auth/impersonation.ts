import type { KubeClient } from '@cellfed/controller-kit';

import type { UserInfo } from './user-info.ts';

const IMPERSONATE_USER = 'impersonate-user';
const IMPERSONATE_GROUP = 'impersonate-group';
const IMPERSONATE_UID = 'impersonate-uid';
const IMPERSONATE_EXTRA = 'impersonate-extra-';

/** The headers that make an apiserver act as `user` (the router's own identity must be allowed to). */
export function impersonationHeaders(user: UserInfo): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { 'Impersonate-User': user.username };
  const groups = user.groups.filter((group) => group !== 'system:authenticated');
  if (groups.length > 0) headers['Impersonate-Group'] = groups;
  for (const [key, values] of Object.entries(user.extra)) {
    headers[`Impersonate-Extra-${encodeURIComponent(key)}`] = values;
  }
  return headers;
}

/** Whether the client asked to impersonate someone itself. */
export function requestedImpersonation(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): UserInfo | undefined {
  const user = headers[IMPERSONATE_USER];
  if (user === undefined) {
    const other = Object.keys(headers).some(
      (name) => name === IMPERSONATE_GROUP || name === IMPERSONATE_UID || name.startsWith(IMPERSONATE_EXTRA),
    );
    // Groups or extras without a user is what kube-apiserver refuses too.
    return other ? { username: '', groups: [], extra: {} } : undefined;
  }
  const list = (value: string | string[] | undefined) =>
    value === undefined ? [] : Array.isArray(value) ? value : value.split(',').map((v) => v.trim());
  const extra: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(IMPERSONATE_EXTRA))
      extra[decodeURIComponent(name.slice(IMPERSONATE_EXTRA.length))] = list(value);
  }
  return { username: Array.isArray(user) ? user[0]! : user, groups: list(headers[IMPERSONATE_GROUP]), extra };
}

interface SubjectAccessReview {
  status?: { allowed?: boolean; reason?: string };
}

/**
 * Honours a client's own Impersonate-* headers only if the control plane says the caller may impersonate
 * that user and each of those groups (SubjectAccessReview, verb `impersonate`), as kube-apiserver checks.
 */
export async function mayImpersonate(
  controlPlane: Pick<KubeClient, 'request'>,
  caller: UserInfo,
  target: UserInfo,
): Promise<true | string> {
  if (target.username === '') return 'Impersonate-Group and Impersonate-Extra need Impersonate-User';
  const checks = [
    { resource: 'users', name: target.username },
    ...target.groups.map((group) => ({ resource: 'groups', name: group })),
  ];
  for (const check of checks) {
    const review = await controlPlane.request<SubjectAccessReview>(
      'POST',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: caller.username,
            groups: caller.groups,
            extra: caller.extra,
            resourceAttributes: { verb: 'impersonate', resource: check.resource, name: check.name },
          },
        },
      },
    );
    if (!review.status?.allowed) {
      return `${check.resource} "${check.name}" is forbidden: User "${caller.username}" cannot impersonate resource "${check.resource}" in API group ""`;
    }
  }
  return true;
}
