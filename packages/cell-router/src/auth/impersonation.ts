import type { AccessReviewer } from './access-reviewer.ts';
import { forbiddenMessage } from './request-authorization.ts';
import type { UserInfo } from './user-info.ts';

/**
 * The headers every request the router sends on for one caller carries: who to impersonate, where the
 * caller is (`X-Forwarded-For`, for the cells' audit logs), and the request's trace context
 * (`traceparent`), so a cell's own spans join the router's.
 */
export type Impersonation = Record<string, string | string[]>;

const IMPERSONATE_USER = 'impersonate-user';
const IMPERSONATE_GROUP = 'impersonate-group';
const IMPERSONATE_UID = 'impersonate-uid';
const IMPERSONATE_EXTRA = 'impersonate-extra-';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
const AUTHENTICATION_GROUP = 'authentication.k8s.io';
const ANONYMOUS = 'system:anonymous';
const AUTHENTICATED = 'system:authenticated';
const UNAUTHENTICATED = 'system:unauthenticated';

/**
 * At most this many groups and extra values in one impersonation: each costs a SubjectAccessReview as the
 * router. kube-apiserver has no such limit but its header size (a documented difference, docs/security.md).
 */
export const MAX_IMPERSONATION_VALUES = 64;

/**
 * The headers that make an apiserver act as `user` (the router's own identity must be allowed to). Every
 * group is sent, `system:authenticated` included, so the apiserver adds none of its own: a service account's
 * name without its groups stays without them. Values go as UTF-8 bytes (the client writes headers as latin1).
 */
export function impersonationHeaders(user: UserInfo): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { 'Impersonate-User': wireValue(user.username) };
  if (user.uid) headers['Impersonate-Uid'] = wireValue(user.uid);
  const groups = user.groups.filter((group) => group !== '').map(wireValue);
  if (groups.length > 0) headers['Impersonate-Group'] = groups;
  for (const [key, values] of Object.entries(user.extra)) {
    headers[`Impersonate-Extra-${extraKeyHeader(key)}`] = values.map(wireValue);
  }
  return headers;
}

/** A client's own Impersonate-* headers, read as kube-apiserver reads them. */
export type ImpersonationRequest =
  /** `user` as the apiserver acts as them; `askedGroups` as the client named them (checked). */
  | { readonly kind: 'user'; readonly user: UserInfo; readonly askedGroups: readonly string[] }
  /** Refused before any check (400): groups, extras or a uid without a user; too many values. */
  | { readonly kind: 'invalid'; readonly reason: string };

/**
 * Whether the client asked to impersonate someone itself; undefined if it did not. Read from the raw header
 * lines (Node's `rawHeaders`: name, value, name, value, …) as kube-apiserver's impersonation filter reads
 * them: the first user and the first uid (an empty one is none), every group line as one group (no comma
 * splitting), every extra line as one value, extra keys lowercased and percent-decoded.
 */
export function requestedImpersonation(rawHeaders: readonly string[]): ImpersonationRequest | undefined {
  let user: string | undefined;
  let uid: string | undefined;
  let groupsSpecified = false;
  const groups: string[] = [];
  const extra: Record<string, string[]> = {};
  let values = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!name.startsWith('impersonate-')) continue;
    const value = utf8Value(rawHeaders[i + 1]!);
    if (name === IMPERSONATE_USER) user ??= value;
    else if (name === IMPERSONATE_UID) uid ??= value;
    else if (name === IMPERSONATE_GROUP) {
      groupsSpecified = true;
      groups.push(value);
      values++;
    } else if (name.startsWith(IMPERSONATE_EXTRA)) {
      (extra[unescapedKey(name.slice(IMPERSONATE_EXTRA.length))] ??= []).push(value);
      values++;
    }
  }
  if (!user) {
    const asked = [
      ...(groupsSpecified ? [`groups ${JSON.stringify(groups)}`] : []),
      ...(Object.keys(extra).length > 0 ? [`extra ${JSON.stringify(extra)}`] : []),
      ...(uid ? [`uid ${JSON.stringify(uid)}`] : []),
    ];
    return asked.length > 0
      ? { kind: 'invalid', reason: `requested ${asked.join(', ')} without impersonating a user` }
      : undefined;
  }
  if (values > MAX_IMPERSONATION_VALUES)
    return {
      kind: 'invalid',
      reason: `requested ${values} impersonated groups and extra values; the cell router checks at most ${MAX_IMPERSONATION_VALUES}`,
    };
  const serviceAccount = serviceAccountOf(user);
  // As kube-apiserver: a service account asked for without groups has its own; then every user but the
  // anonymous one is authenticated.
  const given = groupsSpecified
    ? [...groups]
    : serviceAccount
      ? ['system:serviceaccounts', `system:serviceaccounts:${serviceAccount.namespace}`]
      : [];
  if (user === ANONYMOUS) {
    if (!given.includes(UNAUTHENTICATED)) given.push(UNAUTHENTICATED);
  } else if (!given.includes(AUTHENTICATED) && !given.includes(UNAUTHENTICATED)) given.push(AUTHENTICATED);
  return {
    kind: 'user',
    user: { username: user, ...(uid ? { uid } : {}), groups: given, extra },
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
 * What kube-apiserver's impersonation filter checks before it acts as `target`, in its order: the user (a
 * service account's `system:serviceaccount:<namespace>:<name>` as that service account, and only that),
 * each group asked for, each value of each extra, and the uid. Groups a service account is given, not asked
 * for, are not checked. A permission asked twice is checked once.
 */
export function impersonationChecks(target: UserInfo, askedGroups: readonly string[]): ImpersonationCheck[] {
  const serviceAccount = serviceAccountOf(target.username);
  const checks: ImpersonationCheck[] = [
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
  const seen = new Set<string>();
  return checks.filter((check) => {
    const key = JSON.stringify(check);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Honours a client's own Impersonate-* headers only if the caller has every permission kube-apiserver would
 * check ({@link impersonationChecks}, SubjectAccessReviews of verb `impersonate` against the control plane),
 * checked one at a time in its order and stopping at the first refusal: answers who to act as, or why not,
 * worded as kube-apiserver words it (a 400 for a request it refuses before any check, else a 403).
 */
export async function authorizeImpersonation(
  reviewer: Pick<AccessReviewer, 'allowed'>,
  caller: UserInfo,
  asked: ImpersonationRequest,
): Promise<{ user: UserInfo } | { invalid: string } | { denied: string }> {
  if (asked.kind === 'invalid') return { invalid: asked.reason };
  for (const check of impersonationChecks(asked.user, asked.askedGroups)) {
    if (!(await reviewer.allowed(caller, { verb: 'impersonate', ...check })))
      return { denied: forbiddenMessage(caller.username, { verb: 'impersonate', ...check }) };
  }
  return { user: asked.user };
}

/**
 * An extra's key as a header name kube-apiserver reads back as that key (it lowercases the name, then
 * percent-decodes it): every byte but lowercase letters, digits and `-._~` escaped, so `A` goes as `%41`
 * and comes back `A`, and nothing that is not a token character reaches the header's name.
 */
function extraKeyHeader(key: string): string {
  let name = '';
  for (const byte of Buffer.from(key, 'utf8'))
    name += /[a-z0-9\-._~]/.test(String.fromCharCode(byte))
      ? String.fromCharCode(byte)
      : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return name;
}

/** An extra's key from its header name: percent-decoded, or as it is when that fails (as kube-apiserver). */
function unescapedKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** kube-apiserver's validation names: a namespace is a DNS-1123 label, a service account a subdomain. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The namespace and name of a service account's username, validated as kube-apiserver's SplitUsername does
 * (a DNS label and a DNS subdomain); undefined for any other user, which is then checked as a user.
 */
export function serviceAccountOf(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const [namespace, name, ...rest] = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
  if (rest.length > 0 || !namespace || !name) return undefined;
  const subdomain = name.length <= 253 && DNS_SUBDOMAIN.test(name);
  return DNS_LABEL.test(namespace) && subdomain ? { namespace, name } : undefined;
}

/**
 * A header value as the text it carries: Node reads header bytes as latin1, and Kubernetes' are UTF-8. A
 * value that is not UTF-8 is kept as it came (its bytes then go on unchanged).
 */
function utf8Value(value: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(value)) return value;
  const bytes = Buffer.from(value, 'latin1');
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : value;
}

/** The inverse of {@link utf8Value}: text as the latin1 string whose bytes are its UTF-8. */
function wireValue(text: string): string {
  // eslint-disable-next-line no-control-regex
  return /[^\x00-\x7f]/.test(text) ? Buffer.from(text, 'utf8').toString('latin1') : text;
}
