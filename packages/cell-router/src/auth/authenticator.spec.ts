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
  /** A control plane that accepts tokens starting with good-, and holds reviews while `hold` is set. */
  function setup(options: { maxReviewsInFlight?: number; maxReviewsInFlightPerPeer?: number } = {}) {
    const clock = new FakeClock();
    const reviewed: string[] = [];
    let release: () => void = () => undefined;
    let held: Promise<void> | undefined;
    const controlPlane = {
      request: async <T>(_method: string, _path: string, request: { body?: unknown } = {}): Promise<T> => {
        const token = (request.body as { spec: { token: string } }).spec.token;
        reviewed.push(token);
        if (held) await held;
        if (token === 'good-down') throw new Error('connect ECONNREFUSED');
        return (
          token.startsWith('good-')
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
    return { as, clock, reviewed, hold, release: () => release(), authenticator };
  }

  it('keeps a yes 10 s and a no 5 s, each in its own bounded cache: bad tokens cannot push a good one out', async () => {
    const { as, clock, reviewed } = setup();
    expect(await as('good-jane')).toEqual({ user: { username: 'jane', groups: ['g'], extra: {} } });
    for (let i = 0; i < 2_000; i++) await as(`bad-${i}`);
    expect(await as('bad-1999')).toEqual({ failure: 'token rejected: invalid bearer token' });
    expect(await as('good-jane')).toMatchObject({ user: { username: 'jane' } });
    expect(reviewed).toHaveLength(2_001);
    await clock.advance(5_000);
    await as('bad-1999');
    await as('good-jane');
    expect(reviewed).toHaveLength(2_002);
    await clock.advance(5_000);
    await as('good-jane');
    expect(reviewed).toHaveLength(2_003);
  });

  it('sends one review per token at a time, and at most maxReviewsInFlight reviews: past that, busy', async () => {
    const { as, reviewed, hold, release } = setup({ maxReviewsInFlight: 2, maxReviewsInFlightPerPeer: 2 });
    hold();
    const first = [as('good-a'), as('good-a'), as('good-b')];
    expect(await as('good-c')).toEqual({ busy: 'too many token reviews in flight' });
    release();
    expect((await Promise.all(first)).map((one) => ('user' in one ? one.user.username : one))).toEqual([
      'a',
      'a',
      'b',
    ]);
    expect(reviewed).toEqual(['good-a', 'good-b']);
    expect(await as('good-c')).toMatchObject({ user: { username: 'c' } });
  });

  it('sends no review for a token too long to be one', async () => {
    const { as, reviewed } = setup();
    expect(await as(`good-${'x'.repeat(20_000)}`)).toEqual({ failure: 'token rejected: too long' });
    expect(reviewed).toEqual([]);
  });

  it('holds one client address to its share of the reviews in flight: others are still reviewed', async () => {
    const { as, hold, release } = setup({ maxReviewsInFlight: 8, maxReviewsInFlightPerPeer: 2 });
    hold();
    const flood = [as('bad-1', '203.0.113.9'), as('bad-2', '203.0.113.9')];
    expect(await as('bad-3', '203.0.113.9')).toEqual({ busy: 'too many token reviews in flight' });
    const other = as('good-jane', '192.0.2.1');
    release();
    expect(await other).toMatchObject({ user: { username: 'jane' } });
    await Promise.all(flood);
  });

  it('keeps serving a known caller from its stale yes while no review can be sent', async () => {
    const { as, clock, hold, release } = setup({ maxReviewsInFlight: 1 });
    expect(await as('good-jane')).toMatchObject({ user: { username: 'jane' } });
    await clock.advance(60_000);
    hold();
    const flood = as('bad-1', '203.0.113.9');
    expect(await as('good-jane')).toMatchObject({ user: { username: 'jane' } });
    release();
    await flood;
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
