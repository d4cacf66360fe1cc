import { FakeClock } from '@cellfed/controller-kit/testing';

import { AccessReviewer, AccessReviewsBusy } from './access-reviewer.ts';
import { forbiddenMessage } from './request-authorization.ts';

const alice = { username: 'alice', groups: ['dev', 'system:authenticated'], extra: {} };
const GET_CM = { verb: 'get', group: '', resource: 'configmaps', namespace: 'shop', name: 'app' };

function setup(answers: (boolean | Error | Promise<boolean>)[]) {
  const clock = new FakeClock();
  const sent: unknown[] = [];
  const apiserver = {
    request: async <T>(_method: string, _path: string, options: { body?: unknown } = {}): Promise<T> => {
      sent.push(options.body);
      const answer = await answers.shift();
      if (answer instanceof Error) throw answer;
      return { status: { allowed: answer } } as T;
    },
  };
  const reviewer = new AccessReviewer({
    apiserver,
    clock,
    allowedTtlMs: 30_000,
    deniedTtlMs: 10_000,
    maxEntries: 2,
    maxInFlight: 2,
  });
  return { reviewer, clock, sent };
}

describe('AccessReviewer', () => {
  it('asks a SubjectAccessReview as the user, for exactly the attributes', async () => {
    const { reviewer, sent } = setup([true]);
    expect(await reviewer.allowed(alice, GET_CM)).toBe(true);
    expect(sent).toEqual([
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: 'alice',
          groups: ['dev', 'system:authenticated'],
          extra: {},
          resourceAttributes: GET_CM,
        },
      },
    ]);
  });

  it('reuses an allowed answer for its time to live, a denied one for its own', async () => {
    const { reviewer, clock, sent } = setup([true, false, true, false]);
    const LIST = { verb: 'list', group: '', resource: 'secrets', namespace: 'shop' };
    expect(await reviewer.allowed(alice, GET_CM)).toBe(true);
    expect(await reviewer.allowed(alice, LIST)).toBe(false);
    await clock.advance(9_999);
    expect([await reviewer.allowed(alice, GET_CM), await reviewer.allowed(alice, LIST)]).toEqual([
      true,
      false,
    ]);
    expect(sent).toHaveLength(2);
    await clock.advance(1);
    expect(await reviewer.allowed(alice, LIST)).toBe(true);
    await clock.advance(20_000);
    expect(await reviewer.allowed(alice, GET_CM)).toBe(false);
    expect(sent).toHaveLength(4);
  });

  it('shares one review between concurrent asks, and caches no failure', async () => {
    const { reviewer, sent } = setup([new Error('control plane down'), true]);
    const both = [reviewer.allowed(alice, GET_CM), reviewer.allowed(alice, GET_CM)];
    await expect(Promise.all(both)).rejects.toThrow('control plane down');
    expect(sent).toHaveLength(1);
    expect(await reviewer.allowed(alice, GET_CM)).toBe(true);
    expect(sent).toHaveLength(2);
  });

  it('sends at most maxInFlight reviews at once; the rest wait, and past its queue a caller is busy (a 429)', async () => {
    const answers: ((allowed: boolean) => void)[] = [];
    const sent: string[] = [];
    const apiserver = {
      request: <T>(_method: string, _path: string, options: { body?: unknown } = {}): Promise<T> => {
        const spec = (options.body as { spec: { user: string; resourceAttributes: { name: string } } }).spec;
        sent.push(`${spec.user}/${spec.resourceAttributes.name}`);
        return new Promise<T>((resolve) => answers.push((allowed) => resolve({ status: { allowed } } as T)));
      },
    };
    const reviewer = new AccessReviewer({ apiserver, maxInFlight: 2, maxWaitingPerCaller: 48 });
    const tenant = (n: number) => ({
      username: `system:serviceaccount:tenant:sa-${n}`,
      groups: [],
      extra: {},
    });
    // A tenant's 50 accounts each ask something no cache holds (2 sent, 48 wait: its queue is full); then alice.
    const flood = Array.from({ length: 50 }, (_, n) =>
      reviewer.allowed(tenant(n), { ...GET_CM, name: `x${n}` }),
    );
    await expect(reviewer.allowed(tenant(99), { ...GET_CM, name: 'x99' })).rejects.toBeInstanceOf(
      AccessReviewsBusy,
    );
    const hers = reviewer.allowed(alice, GET_CM);
    expect(sent).toHaveLength(2);
    // One review of the tenant's ends: the next turn is the tenant's, then hers, not after its 48 others.
    answers.shift()!(true);
    await Promise.resolve();
    answers.shift()!(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.indexOf('alice/app')).toBe(3);
    while (answers.length > 0) {
      answers.shift()!(true);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await hers).toBe(true);
    expect(await Promise.all(flood)).toHaveLength(50);
  });

  it('keeps at most maxEntries answers: a stream of different asks cannot grow it', async () => {
    const { reviewer, sent } = setup([true, true, true, true]);
    for (const name of ['a', 'b', 'c']) await reviewer.allowed(alice, { ...GET_CM, name });
    // 'a' was the least recently used and went; 'c' is still there.
    await reviewer.allowed(alice, { ...GET_CM, name: 'c' });
    expect(sent).toHaveLength(3);
    await reviewer.allowed(alice, { ...GET_CM, name: 'a' });
    expect(sent).toHaveLength(4);
  });
});

describe('forbiddenMessage (kube-apiserver’s words)', () => {
  it.each([
    [
      GET_CM,
      'configmaps "app" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "shop"',
    ],
    [
      { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'shop' },
      'deployments.apps is forbidden: User "alice" cannot create resource "deployments" in API group "apps" in the namespace "shop"',
    ],
    [
      { verb: 'create', group: '', resource: 'pods', subresource: 'exec', namespace: 'shop', name: 'web' },
      'pods "web" is forbidden: User "alice" cannot create resource "pods/exec" in API group "" in the namespace "shop"',
    ],
    [
      { verb: 'list', group: '', resource: 'namespaces' },
      'namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope',
    ],
    [{ verb: 'get', path: '/metrics' }, 'forbidden: User "alice" cannot get path "/metrics"'],
  ])('%j', (attributes, message) => {
    expect(forbiddenMessage('alice', attributes)).toBe(message);
  });
});
