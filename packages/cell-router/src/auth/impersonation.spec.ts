import {
  authorizeImpersonation,
  impersonationChecks,
  impersonationHeaders,
  requestedImpersonation,
  type ImpersonationCheck,
} from './impersonation.ts';
import type { UserInfo } from './user-info.ts';

const alice: UserInfo = { username: 'alice', uid: 'alice-uid', groups: ['dev'], extra: {} };

/** A control plane whose SubjectAccessReviews allow exactly `allowed` (`resource[/subresource]:[ns/]name`). */
function controlPlane(allowed: string[]) {
  const reviews: Record<string, unknown>[] = [];
  return {
    reviews,
    request: async <T>(_method: string, _path: string, options: { body?: unknown } = {}): Promise<T> => {
      const spec = (options.body as { spec: Record<string, unknown> }).spec;
      reviews.push(spec);
      const a = spec['resourceAttributes'] as Record<string, string>;
      const key = `${a['resource']}${a['subresource'] ? `/${a['subresource']}` : ''}:${a['namespace'] ? `${a['namespace']}/` : ''}${a['name']}`;
      return { status: { allowed: allowed.includes(key) } } as T;
    },
  };
}

describe('requestedImpersonation', () => {
  it('is nothing without Impersonate-* headers, or with an empty user alone (kube-apiserver reads it so)', () => {
    expect(requestedImpersonation({ accept: 'application/json' })).toBeUndefined();
    expect(requestedImpersonation({ 'impersonate-user': '' })).toBeUndefined();
    expect(requestedImpersonation({ 'impersonate-user': '', 'impersonate-group': 'x' })).toMatchObject({
      kind: 'incomplete',
    });
  });

  it('keeps a user name and uid whole, and an extra key that is not percent-encoding as it is', () => {
    expect(
      requestedImpersonation({
        'impersonate-user': 'a,b',
        'impersonate-uid': 'x,y',
        'impersonate-extra-%zz': 'v',
      }),
    ).toEqual({
      kind: 'user',
      user: { username: 'a,b', uid: 'x,y', groups: [], extra: { '%zz': ['v'] } },
      askedGroups: [],
    });
  });

  it.each([
    [{ 'impersonate-group': 'admins' }, 'Impersonate-Group without Impersonate-User'],
    [{ 'impersonate-uid': '42' }, 'Impersonate-Uid without Impersonate-User'],
    [{ 'impersonate-extra-scopes': 'view' }, 'Impersonate-Extra-* without Impersonate-User'],
  ])('refuses %j without a user, as kube-apiserver does', (headers, reason) => {
    expect(requestedImpersonation(headers)).toEqual({ kind: 'incomplete', reason });
  });

  it('reads the user, its uid, groups (repeated or comma-separated) and percent-encoded extra keys', () => {
    expect(
      requestedImpersonation({
        'impersonate-user': 'bob',
        'impersonate-uid': 'bob-uid',
        'impersonate-group': ['a', 'b, c'],
        'impersonate-extra-example.com%2fteam': 'x, y',
      }),
    ).toEqual({
      kind: 'user',
      user: {
        username: 'bob',
        uid: 'bob-uid',
        groups: ['a', 'b', 'c'],
        extra: { 'example.com/team': ['x', 'y'] },
      },
      askedGroups: ['a', 'b', 'c'],
    });
  });

  it("gives a service account asked for without groups its own groups, which are not the client's to check", () => {
    expect(requestedImpersonation({ 'impersonate-user': 'system:serviceaccount:shop:builder' })).toEqual({
      kind: 'user',
      user: {
        username: 'system:serviceaccount:shop:builder',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:shop'],
        extra: {},
      },
      askedGroups: [],
    });
  });
});

describe('impersonationChecks (what kube-apiserver’s impersonation filter authorizes)', () => {
  const user = (over: Partial<UserInfo>): UserInfo => ({ username: 'bob', groups: [], extra: {}, ...over });
  it.each<[string, UserInfo, string[], ImpersonationCheck[]]>([
    ['a user', user({}), [], [{ group: '', resource: 'users', name: 'bob' }]],
    [
      'a service account, as that service account only',
      user({ username: 'system:serviceaccount:shop:builder' }),
      [],
      [{ group: '', resource: 'serviceaccounts', namespace: 'shop', name: 'builder' }],
    ],
    [
      'a name that only looks like a service account, as a user',
      user({ username: 'system:serviceaccount:shop' }),
      [],
      [{ group: '', resource: 'users', name: 'system:serviceaccount:shop' }],
    ],
    [
      'each group asked for',
      user({ groups: ['a', 'b'] }),
      ['a', 'b'],
      [
        { group: '', resource: 'users', name: 'bob' },
        { group: '', resource: 'groups', name: 'a' },
        { group: '', resource: 'groups', name: 'b' },
      ],
    ],
    [
      'each value of each extra, the key as subresource',
      user({ extra: { scopes: ['view', 'edit'], team: ['x'] } }),
      [],
      [
        { group: '', resource: 'users', name: 'bob' },
        { group: 'authentication.k8s.io', resource: 'userextras', subresource: 'scopes', name: 'view' },
        { group: 'authentication.k8s.io', resource: 'userextras', subresource: 'scopes', name: 'edit' },
        { group: 'authentication.k8s.io', resource: 'userextras', subresource: 'team', name: 'x' },
      ],
    ],
    [
      'the uid',
      user({ uid: '42' }),
      [],
      [
        { group: '', resource: 'users', name: 'bob' },
        { group: 'authentication.k8s.io', resource: 'uids', name: '42' },
      ],
    ],
  ])('checks %s', (_what, target, askedGroups, checks) => {
    expect(impersonationChecks(target, askedGroups)).toEqual(checks);
  });
});

describe('authorizeImpersonation', () => {
  const ask = (headers: Record<string, string>) => requestedImpersonation(headers)!;

  it('acts as the user when every check is allowed, asking as the caller', async () => {
    const plane = controlPlane(['users:bob', 'groups:ops', 'userextras/scopes:view', 'uids:7']);
    const asked = ask({
      'impersonate-user': 'bob',
      'impersonate-group': 'ops',
      'impersonate-extra-scopes': 'view',
      'impersonate-uid': '7',
    });
    expect(await authorizeImpersonation(plane, alice, asked)).toEqual({
      user: { username: 'bob', uid: '7', groups: ['ops'], extra: { scopes: ['view'] } },
    });
    expect(plane.reviews).toHaveLength(4);
    expect(plane.reviews[0]).toMatchObject({ user: 'alice', uid: 'alice-uid', groups: ['dev'] });
  });

  it.each([
    [
      'an extra it may not add',
      ['users:bob'],
      { 'impersonate-user': 'bob', 'impersonate-extra-scopes': 'admin' },
      'userextras.authentication.k8s.io "admin" is forbidden: User "alice" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
    ],
    [
      'a uid it may not use',
      ['users:bob'],
      { 'impersonate-user': 'bob', 'impersonate-uid': '0' },
      'uids.authentication.k8s.io "0" is forbidden: User "alice" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope',
    ],
    [
      'a group it may not join',
      ['users:bob'],
      { 'impersonate-user': 'bob', 'impersonate-group': 'system:masters' },
      'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope',
    ],
    [
      'a service account allowed only as a user name',
      ['users:system:serviceaccount:shop:builder'],
      { 'impersonate-user': 'system:serviceaccount:shop:builder' },
      'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "shop"',
    ],
    [
      'groups without a user',
      [],
      { 'impersonate-group': 'dev' },
      'Impersonate-Group without Impersonate-User',
    ],
  ])('refuses %s', async (_what, allowed, headers, message) => {
    expect(await authorizeImpersonation(controlPlane(allowed), alice, ask(headers))).toEqual({
      denied: message,
    });
  });

  it('honours a service account the caller may impersonate as one (RBAC on serviceaccounts)', async () => {
    const plane = controlPlane(['serviceaccounts:shop/builder']);
    const decided = await authorizeImpersonation(
      plane,
      alice,
      ask({ 'impersonate-user': 'system:serviceaccount:shop:builder' }),
    );
    expect(decided).toEqual({
      user: {
        username: 'system:serviceaccount:shop:builder',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:shop'],
        extra: {},
      },
    });
    expect(plane.reviews).toHaveLength(1);
  });
});

describe('impersonationHeaders', () => {
  it('carries the user, its uid, groups but system:authenticated, and extras with encoded keys', () => {
    expect(
      impersonationHeaders({
        username: 'bob',
        uid: '7',
        groups: ['system:authenticated', 'ops'],
        extra: { 'example.com/team': ['x'] },
      }),
    ).toEqual({
      'Impersonate-User': 'bob',
      'Impersonate-Uid': '7',
      'Impersonate-Group': ['ops'],
      'Impersonate-Extra-example.com%2Fteam': ['x'],
    });
  });
});
