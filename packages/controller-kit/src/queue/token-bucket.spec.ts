import { TokenBucket } from './token-bucket.ts';

describe('TokenBucket', () => {
  it('gives a burst, then refills at qps', () => {
    const bucket = new TokenBucket(10, 3, 0);
    expect([bucket.tryTake(0), bucket.tryTake(0), bucket.tryTake(0), bucket.tryTake(0)]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(bucket.waitMs(0)).toBe(100);
    expect(bucket.tryTake(50)).toBe(false);
    expect(bucket.waitMs(50)).toBe(50);
    expect(bucket.tryTake(100)).toBe(true);
  });

  it('never saves more than the burst', () => {
    const bucket = new TokenBucket(100, 2, 0);
    bucket.tryTake(0);
    const taken = [1, 2, 3].map(() => bucket.tryTake(60_000));
    expect(taken).toEqual([true, true, false]);
  });

  it('rejects a bucket that would never give a token', () => {
    expect(() => new TokenBucket(0, 1, 0)).toThrow(RangeError);
    expect(() => new TokenBucket(1, 0, 0)).toThrow(RangeError);
  });
});
