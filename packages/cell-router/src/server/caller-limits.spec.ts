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

  it('forgets a caller once it has nothing open', () => {
    const limits = new CallerLimits({ maxRequestsInFlight: 1, maxLongRunning: 1 });
    const releases = Array.from({ length: 1000 }, (_, i) => limits.acquire(`user-${i}`, i % 2 === 0)!);
    expect(limits.callers).toBe(1000);
    for (const release of releases) release();
    expect(limits.callers).toBe(0);
  });
});
