import { createHash } from 'node:crypto';

import { FakeClock } from '@cellfed/controller-kit/testing';

import { Authenticator, CREDENTIAL_ID_EXTRA, userOfCertificate } from './authenticator.ts';

describe('userOfCertificate', () => {
  const raw = Buffer.from('the DER bytes of a certificate');

  it('reads CN as the user, each O as a group, and the certificate digest as the credential id', () => {
    const user = userOfCertificate({ subject: { CN: 'jane', O: ['dev', 'ops'] } as never, raw });
    expect(user).toEqual({
      username: 'jane',
      groups: ['dev', 'ops', 'system:authenticated'],
      extra: { [CREDENTIAL_ID_EXTRA]: [`X509SHA256=${createHash('sha256').update(raw).digest('hex')}`] },
    });
  });

  it('takes a single O as one group, and refuses a certificate without a CN', () => {
    expect(userOfCertificate({ subject: { CN: 'jane', O: 'dev' } as never, raw })?.groups).toEqual([
      'dev',
      'system:authenticated',
    ]);
    expect(userOfCertificate({ subject: { O: 'dev' } as never, raw })).toBeNull();
  });
});

describe('Authenticator (bearer tokens)', () => {
  /**
   * A control plane that accepts tokens starting with good- (but those in `revoked`), and holds reviews while
   * `hold` is set.
   */
  function setup(
    options: {
      maxReviewsInFlight?: number;
      maxReviewsWaitingPerFlow?: number;
      maxRejectedPerPeer?: number;
    } = {},
  ) {
    const clock = new FakeClock();
    const reviewed: string[] = [];
    const revoked = new Set<string>();
    let release: () => void = () => undefined;
    let held: Promise<void> | undefined;
    const controlPlane = {
      request: async <T>(_method: string, _path: string, request: { body?: unknown } = {}): Promise<T> => {
        const token = (request.body as { spec: { token: string } }).spec.token;
        reviewed.push(token);
        if (held) await held;
        if (token === 'good-down') throw new Error('connect ECONNREFUSED');
        return (
          token.startsWith('good-') && !revoked.has(token)
            ? { status: { authenticated: true, user: { username: token.slice(5), groups: ['g'] } } }
            : { status: { authenticated: false, error: 'invalid bearer token' } }
        ) as T;
      },
    };
    const authenticator = new Authenticator({ controlPlane, clock, ...options });
    const as = (token: string, peer = '192.0.2.1') =>
      authenticator.authenticate({
        headers: { authorization: `Bearer ${token}` },
        socket: { remoteAddress: peer } as never,
      });
    const hold = () => {
      held = new Promise((resolve) => (release = resolve));
    };
    const unhold = () => {
      held = undefined;
      release();
    };
    return { as, clock, reviewed, revoked, hold, release: unhold, authenticator };
  }

  it('keeps a yes 10 s and a no 5 s, each in its own bounded cache: bad tokens cannot push a good one out', async () => {
    const { as, clock, reviewed } = setup();
    // From many addresses, each within its share of rejections.
    const peer = (i: number) => `198.51.100.${i % 250}`;
    expect(await as('good-jane')).toEqual({ user: { username: 'jane', groups: ['g'], extra: {} } });
    for (let i = 0; i < 2_000; i++) await as(`bad-${i}`, peer(i));
    expect(await as('bad-1999', peer(1999))).toEqual({ failure: 'token rejected: invalid bearer token' });
    expect(await as('good-jane')).toMatchObject({ user: { username: 'jane' } });
    expect(reviewed).toHaveLength(2_001);
    await clock.advance(5_000);
    await as('bad-1999', peer(1999));
    await as('good-jane');
    expect(reviewed).toHaveLength(2_002);
    await clock.advance(5_000);
    await as('good-jane');
    expect(reviewed).toHaveLength(2_003);
  });

  it('sends one review per token at a time; past maxReviewsInFlight they wait their turn, past the flow’s queue a 429', async () => {
    const { as, reviewed, hold, release } = setup({ maxReviewsInFlight: 2, maxReviewsWaitingPerFlow: 1 });
    hold();
    const first = [as('good-a'), as('good-a'), as('good-b'), as('good-c')];
    expect(await as('good-d')).toEqual({ busy: 'too many token reviews waiting from this client' });
    release();
    expect((await Promise.all(first)).map((one) => ('user' in one ? one.user.username : one))).toEqual([
      'a',
      'a',
      'b',
      'c',
    ]);
    expect(reviewed).toEqual(['good-a', 'good-b', 'good-c']);
  });

  it('sends no review for a token too long to be one', async () => {
    const { as, reviewed } = setup();
    expect(await as(`good-${'x'.repeat(20_000)}`)).toEqual({ failure: 'token rejected: too long' });
    expect(reviewed).toEqual([]);
  });

  it('takes reviews in turn by client address: a flood of made-up tokens delays another client by one turn', async () => {
    const { as, reviewed, hold, release } = setup({ maxReviewsInFlight: 2, maxReviewsWaitingPerFlow: 1_000 });
    hold();
    const flood = Array.from({ length: 200 }, (_, i) => as(`bad-${i}`, '203.0.113.9'));
    const other = as('good-jane', '192.0.2.1');
    release();
    expect(await other).toMatchObject({ user: { username: 'jane' } });
    // Two in flight when it came, the flood's turn, then its own: the fourth review sent, not the 201st.
    expect(reviewed.indexOf('good-jane')).toBe(3);
    await Promise.all(flood);
  });

  it('gives a token accepted before a flow of its own, and never uses its yes past its time, however busy', async () => {
    const { as, clock, reviewed, revoked, hold, release } = setup({ maxReviewsInFlight: 1 });
    expect(await as('good-jane', '203.0.113.9')).toMatchObject({ user: { username: 'jane' } });
    await clock.advance(10_000);
    revoked.add('good-jane');
    hold();
    // The same address floods; jane's token is reviewed again in its own turn, and is now refused.
    const flood = Array.from({ length: 50 }, (_, i) => as(`bad-${i}`, '203.0.113.9'));
    const again = as('good-jane', '203.0.113.9');
    release();
    expect(await again).toEqual({ failure: 'token rejected: invalid bearer token' });
    expect(reviewed.indexOf('good-jane', 1)).toBeLessThanOrEqual(3);
    await Promise.all(flood);
  });

  it('costs the control plane at most maxRejectedPerPeer reviews of made-up tokens per address per period', async () => {
    const { as, clock, reviewed } = setup({ maxRejectedPerPeer: 10 });
    for (let i = 0; i < 100; i++) await as(`bad-${i}`, '203.0.113.9');
    expect(reviewed).toHaveLength(10);
    expect(await as('bad-new', '203.0.113.9')).toEqual({
      busy: 'too many rejected tokens from this client; retry later',
    });
    // Another address, and a token of the same address accepted before, are reviewed as ever.
    expect(await as('good-jane', '192.0.2.1')).toMatchObject({ user: { username: 'jane' } });
    await clock.advance(5_000);
    expect(await as('good-bob', '203.0.113.9')).toMatchObject({ user: { username: 'bob' } });
  });

  it('says the control plane could not be asked (a retry), not that the token is bad, and keeps nothing', async () => {
    const { as, reviewed } = setup();
    expect(await as('good-down')).toEqual({
      unavailable: 'could not review the token: connect ECONNREFUSED',
    });
    await as('good-down');
    expect(reviewed).toEqual(['good-down', 'good-down']);
  });
});
