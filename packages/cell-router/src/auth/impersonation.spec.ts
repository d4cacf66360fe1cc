import type { AccessAttributes } from './access-reviewer.ts';
import {
  MAX_IMPERSONATION_VALUES,
  authorizeImpersonation,
  impersonationChecks,
  impersonationHeaders,
  requestedImpersonation,
  serviceAccountOf,
  type ImpersonationCheck,
} from './impersonation.ts';
import type { UserInfo } from './user-info.ts';

const alice: UserInfo = { username: 'alice', uid: 'alice-uid', groups: ['dev'], extra: {} };

/** A reviewer that allows exactly `allowed` (`resource[/subresource]:[ns/]name`), recording what it was asked. */
function reviewer(allowed: string[]) {
  const reviews: { user: UserInfo; attributes: AccessAttributes }[] = [];
  return {
    reviews,
    allowed: async (user: UserInfo, attributes: AccessAttributes): Promise<boolean> => {
      reviews.push({ user, attributes });
      if ('path' in attributes) return false;
      const { resource, subresource, namespace, name } = attributes;
      return allowed.includes(
        `${resource}${subresource ? `/${subresource}` : ''}:${namespace ? `${namespace}/` : ''}${name}`,
      );
    },
  };
}

/** Header lines as Node's rawHeaders gives them (name, value, …), in order. */
const raw = (...lines: [string, string][]) => lines.flat();

describe('requestedImpersonation', () => {
  it('is nothing without Impersonate-* headers, or with an empty user alone (kube-apiserver reads it so)', () => {
    expect(requestedImpersonation(raw(['Accept', 'application/json']))).toBeUndefined();
    expect(requestedImpersonation(raw(['Impersonate-User', '']))).toBeUndefined();
    expect(requestedImpersonation(raw(['Impersonate-User', ''], ['Impersonate-Group', 'x']))).toMatchObject({
      kind: 'invalid',
    });
  });

  it('takes the first user and uid, keeps them whole, and an extra key that is not percent-encoding as it is', () => {
    expect(
      requestedImpersonation(
        raw(
          ['Impersonate-User', 'a,b'],
          ['Impersonate-User', 'mallory'],
          ['Impersonate-Uid', 'x,y'],
          ['Impersonate-Uid', 'other'],
          ['Impersonate-Extra-%zz', 'v'],
        ),
      ),
    ).toEqual({
      kind: 'user',
      user: { username: 'a,b', uid: 'x,y', groups: ['system:authenticated'], extra: { '%zz': ['v'] } },
      askedGroups: [],
    });
  });

  it.each<[[string, string][], string]>([
    [[['Impersonate-Group', 'admins']], 'requested groups ["admins"] without impersonating a user'],
    [[['Impersonate-Uid', '42']], 'requested uid "42" without impersonating a user'],
    [
      [['Impersonate-Extra-Scopes', 'view']],
      'requested extra {"scopes":["view"]} without impersonating a user',
    ],
  ])('refuses %j without a user, as kube-apiserver does (400)', (lines, reason) => {
    expect(requestedImpersonation(raw(...lines))).toEqual({ kind: 'invalid', reason });
  });

  it('reads each group line as one group (no comma splitting), each extra line as one value, keys decoded', () => {
    expect(
      requestedImpersonation(
        raw(
          ['Impersonate-User', 'bob'],
          ['Impersonate-Uid', 'bob-uid'],
          ['Impersonate-Group', 'a'],
          ['impersonate-group', 'b, c'],
          ['Impersonate-Extra-Example.com%2fTeam', 'x, y'],
          ['Impersonate-Extra-example.com%2fteam', 'z'],
        ),
      ),
    ).toEqual({
      kind: 'user',
      user: {
        username: 'bob',
        uid: 'bob-uid',
        groups: ['a', 'b, c', 'system:authenticated'],
        extra: { 'example.com/team': ['x, y', 'z'] },
      },
      askedGroups: ['a', 'b, c'],
    });
  });

  it("gives a service account asked for without groups its own groups, which are not the client's to check", () => {
    expect(requestedImpersonation(raw(['Impersonate-User', 'system:serviceaccount:shop:builder']))).toEqual({
      kind: 'user',
      user: {
        username: 'system:serviceaccount:shop:builder',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:shop', 'system:authenticated'],
        extra: {},
      },
      askedGroups: [],
    });
  });

  it('gives the anonymous user system:unauthenticated, and adds nothing to a group list that has either', () => {
    expect(requestedImpersonation(raw(['Impersonate-User', 'system:anonymous']))).toMatchObject({
      user: { groups: ['system:unauthenticated'] },
    });
    expect(
      requestedImpersonation(
        raw(['Impersonate-User', 'bob'], ['Impersonate-Group', 'system:unauthenticated']),
      ),
    ).toMatchObject({ user: { groups: ['system:unauthenticated'] } });
  });

  it('reads header bytes as UTF-8 (Node hands them over as latin1)', () => {
    const latin1 = Buffer.from('José', 'utf8').toString('latin1');
    expect(requestedImpersonation(raw(['Impersonate-User', latin1]))).toMatchObject({
      user: { username: 'José' },
    });
  });

  it(`refuses more than ${MAX_IMPERSONATION_VALUES} groups and extra values, before any check`, () => {
    const groups = Array.from(
      { length: MAX_IMPERSONATION_VALUES + 1 },
      (_, i) => ['Impersonate-Group', `g${i}`] as [string, string],
    );
    expect(requestedImpersonation(raw(['Impersonate-User', 'bob'], ...groups))).toMatchObject({
      kind: 'invalid',
    });
    expect(requestedImpersonation(raw(['Impersonate-User', 'bob'], ...groups.slice(1)))).toMatchObject({
      kind: 'user',
    });
  });
});

describe('serviceAccountOf', () => {
  it.each([
    ['system:serviceaccount:shop:builder', { namespace: 'shop', name: 'builder' }],
    ['system:serviceaccount:shop:a.b-c', { namespace: 'shop', name: 'a.b-c' }],
    // A subdomain's labels have no length of their own in kube-apiserver's check, only the whole name.
    [`system:serviceaccount:shop:${'a'.repeat(100)}`, { namespace: 'shop', name: 'a'.repeat(100) }],
    [`system:serviceaccount:shop:${'a'.repeat(254)}`, undefined],
    [`system:serviceaccount:${'s'.repeat(64)}:builder`, undefined],
    ['system:serviceaccount:shop', undefined],
    ['system:serviceaccount:shop:a:b', undefined],
    ['system:serviceaccount:Shop:builder', undefined],
    ['system:serviceaccount:shop:Builder', undefined],
    ['system:serviceaccount:sh_op:builder', undefined],
    ['bob', undefined],
  ])('reads %s as %j (kube-apiserver validates both names)', (username, expected) => {
    expect(serviceAccountOf(username)).toEqual(expected);
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
      user({ username: 'system:serviceaccount:Shop:builder' }),
      [],
      [{ group: '', resource: 'users', name: 'system:serviceaccount:Shop:builder' }],
    ],
    [
      'each group asked for, once',
      user({ groups: ['a', 'b'] }),
      ['a', 'b', 'a'],
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
  const ask = (...lines: [string, string][]) => requestedImpersonation(raw(...lines))!;

  it('acts as the user when every check is allowed, asking as the caller, one check at a time', async () => {
    const decider = reviewer(['users:bob', 'groups:ops', 'userextras/scopes:view', 'uids:7']);
    const asked = ask(
      ['Impersonate-User', 'bob'],
      ['Impersonate-Group', 'ops'],
      ['Impersonate-Extra-Scopes', 'view'],
      ['Impersonate-Uid', '7'],
    );
    expect(await authorizeImpersonation(decider, alice, asked)).toEqual({
      user: {
        username: 'bob',
        uid: '7',
        groups: ['ops', 'system:authenticated'],
        extra: { scopes: ['view'] },
      },
    });
    expect(decider.reviews.map((review) => review.attributes)).toEqual([
      { verb: 'impersonate', group: '', resource: 'users', name: 'bob' },
      { verb: 'impersonate', group: '', resource: 'groups', name: 'ops' },
      {
        verb: 'impersonate',
        group: 'authentication.k8s.io',
        resource: 'userextras',
        subresource: 'scopes',
        name: 'view',
      },
      { verb: 'impersonate', group: 'authentication.k8s.io', resource: 'uids', name: '7' },
    ]);
    expect(decider.reviews[0]!.user).toBe(alice);
  });

  it('stops at the first refusal: nothing after it is asked', async () => {
    const decider = reviewer([]);
    const asked = ask(['Impersonate-User', 'bob'], ['Impersonate-Group', 'a'], ['Impersonate-Group', 'b']);
    expect(await authorizeImpersonation(decider, alice, asked)).toMatchObject({ denied: expect.any(String) });
    expect(decider.reviews).toHaveLength(1);
  });

  it.each<[string, string[], [string, string][], string]>([
    [
      'an extra it may not add',
      ['users:bob'],
      [
        ['Impersonate-User', 'bob'],
        ['Impersonate-Extra-Scopes', 'admin'],
      ],
      'userextras.authentication.k8s.io "admin" is forbidden: User "alice" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
    ],
    [
      'a uid it may not use',
      ['users:bob'],
      [
        ['Impersonate-User', 'bob'],
        ['Impersonate-Uid', '0'],
      ],
      'uids.authentication.k8s.io "0" is forbidden: User "alice" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope',
    ],
    [
      'a group it may not join',
      ['users:bob'],
      [
        ['Impersonate-User', 'bob'],
        ['Impersonate-Group', 'system:masters'],
      ],
      'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope',
    ],
    [
      'a service account allowed only as a user name',
      ['users:system:serviceaccount:shop:builder'],
      [['Impersonate-User', 'system:serviceaccount:shop:builder']],
      'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "shop"',
    ],
  ])('refuses %s (403)', async (_what, allowed, lines, message) => {
    expect(await authorizeImpersonation(reviewer(allowed), alice, ask(...lines))).toEqual({
      denied: message,
    });
  });

  it('refuses groups without a user before any review (400)', async () => {
    const decider = reviewer(['groups:dev']);
    expect(await authorizeImpersonation(decider, alice, ask(['Impersonate-Group', 'dev']))).toEqual({
      invalid: 'requested groups ["dev"] without impersonating a user',
    });
    expect(decider.reviews).toEqual([]);
  });

  it('honours a service account the caller may impersonate as one (RBAC on serviceaccounts)', async () => {
    const decider = reviewer(['serviceaccounts:shop/builder']);
    const decided = await authorizeImpersonation(
      decider,
      alice,
      ask(['Impersonate-User', 'system:serviceaccount:shop:builder']),
    );
    expect(decided).toEqual({
      user: {
        username: 'system:serviceaccount:shop:builder',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:shop', 'system:authenticated'],
        extra: {},
      },
    });
    expect(decider.reviews).toHaveLength(1);
  });
});

describe('impersonationHeaders', () => {
  it('carries the user, its uid, every group and extras with encoded keys', () => {
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
      'Impersonate-Group': ['system:authenticated', 'ops'],
      'Impersonate-Extra-example.com%2Fteam': ['x'],
    });
  });

  it("sends a service account's name with exactly the groups it has, so the apiserver adds none", () => {
    // A certificate whose CN is a service account's name, without its groups: sent without a group list,
    // the cell's impersonation filter would give it system:serviceaccounts and its namespace's group.
    expect(
      impersonationHeaders({
        username: 'system:serviceaccount:shop:builder',
        groups: ['system:authenticated'],
        extra: {},
      })['Impersonate-Group'],
    ).toEqual(['system:authenticated']);
  });

  it('writes an extra key so that kube-apiserver, which lowercases and then decodes it, reads the same key', () => {
    const headers = impersonationHeaders({
      username: 'bob',
      groups: [],
      extra: { Team: ['x'], 'a(b)': ['y'], 'example.com/scope': ['z'] },
    });
    const names = Object.keys(headers).filter((name) => name.startsWith('Impersonate-Extra-'));
    expect(names).toEqual([
      'Impersonate-Extra-%54eam',
      'Impersonate-Extra-a%28b%29',
      'Impersonate-Extra-example.com%2Fscope',
    ]);
    // Read back as requestedImpersonation (kube-apiserver's reading) reads it.
    const lines = names.flatMap((name) => [name, 'v']);
    const read = requestedImpersonation(['Impersonate-User', 'bob', ...lines]);
    expect(Object.keys(read?.kind === 'user' ? read.user.extra : {})).toEqual([
      'Team',
      'a(b)',
      'example.com/scope',
    ]);
  });

  it('writes text as its UTF-8 bytes', () => {
    const headers = impersonationHeaders({ username: 'José', groups: ['équipe'], extra: {} });
    expect(Buffer.from(headers['Impersonate-User'] as string, 'latin1').toString('utf8')).toBe('José');
    expect(Buffer.from((headers['Impersonate-Group'] as string[])[0]!, 'latin1').toString('utf8')).toBe(
      'équipe',
    );
  });
});
