import { callerKeys } from '../auth/caller-keys.ts';
import { CallerLimits } from './caller-limits.ts';

describe('CallerLimits', () => {
  it('lets each caller hold up to its limits, each kind apart, and frees a slot when released', () => {
    const limits = new CallerLimits({ maxRequestsInFlight: 2, maxLongRunning: 1 });
    const first = limits.acquire('mallory', false)!;
    expect(limits.acquire('mallory', false)).toBeDefined();
    expect(limits.acquire('mallory', false)).toBeUndefined();
    const watch = limits.acquire('mallory', true)!;
    expect(limits.acquire('mallory', true)).toBeUndefined();
    // Another caller is not held back by mallory.
    expect(limits.acquire('alice', false)).toBeDefined();
    expect(limits.acquire('alice', true)).toBeDefined();
    first();
    first();
    expect(limits.acquire('mallory', false)).toBeDefined();
    expect(limits.acquire('mallory', false)).toBeUndefined();
    watch();
    expect(limits.acquire('mallory', true)).toBeDefined();
  });

  it('holds a caller to each of its keys: ServiceAccounts a tenant mints share their namespace’s limits', () => {
    const limits = new CallerLimits({ maxRequestsInFlight: 2, maxLongRunning: 1 });
    const account = (name: string) => callerKeys({ username: `system:serviceaccount:team:${name}` });
    const first = limits.acquire(account('a1'), false)!;
    expect(limits.acquire(account('a2'), false)).toBeDefined();
    // A third account of the namespace is held back; nothing is held for it.
    expect(limits.acquire(account('a3'), false)).toBeUndefined();
    expect(limits.acquire(callerKeys({ username: 'system:serviceaccount:other:a1' }), false)).toBeDefined();
    first();
    expect(limits.acquire(account('a3'), false)).toBeDefined();
  });

  it('bounds long-running requests for everyone together, beside each caller’s own limit', () => {
    const limits = new CallerLimits({ maxRequestsInFlight: 10, maxLongRunning: 2, maxLongRunningTotal: 3 });
    const watches = ['alice', 'alice', 'bob'].map((caller) => limits.acquire(caller, true)!);
    expect(watches.every(Boolean)).toBe(true);
    // carol has none open, but everyone's are: her watch waits; her plain requests do not.
    expect(limits.acquire('carol', true)).toBeUndefined();
    expect(limits.acquire('carol', false)).toBeDefined();
    watches[0]!();
    const carols = limits.acquire('carol', true)!;
    expect(limits.acquire('bob', true)).toBeUndefined();
    // A release counts once, however often it is called.
    carols();
    carols();
    expect(limits.acquire('bob', true)).toBeDefined();
    expect(limits.acquire('dave', true)).toBeUndefined();
    expect(limits.callers).toBe(3);
  });

  it('forgets a caller once it has nothing open', () => {
    const limits = new CallerLimits({ maxRequestsInFlight: 1, maxLongRunning: 1 });
    const releases = Array.from({ length: 1000 }, (_, i) => limits.acquire(`user-${i}`, i % 2 === 0)!);
    expect(limits.callers).toBe(1000);
    for (const release of releases) release();
    expect(limits.callers).toBe(0);
  });
});
