import { ItemBackoff } from './item-backoff.ts';

describe('ItemBackoff', () => {
  it('doubles per failure up to the cap, per key', () => {
    const backoff = new ItemBackoff({ baseMs: 10, maxMs: 50 });
    const delays = Array.from({ length: 6 }, () => backoff.next('a'));
    expect(delays).toEqual([10, 20, 40, 50, 50, 50]);
    expect(backoff.next('b')).toBe(10);
    expect(backoff.retries('a')).toBe(6);
  });

  it('stays finite after thousands of failures', () => {
    const backoff = new ItemBackoff();
    let last = 0;
    for (let i = 0; i < 5000; i++) last = backoff.next('a');
    expect(last).toBe(1_000_000);
  });

  it('starts over once forgotten', () => {
    const backoff = new ItemBackoff({ baseMs: 5 });
    backoff.next('a');
    backoff.next('a');
    backoff.forget('a');
    expect(backoff.retries('a')).toBe(0);
    expect(backoff.next('a')).toBe(5);
  });
});
