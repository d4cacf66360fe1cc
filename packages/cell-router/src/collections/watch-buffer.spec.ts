import { FakeClock } from '@cellfed/controller-kit/testing';

import { WatchBuffer, WatchBytesBudget } from './watch-buffer.ts';

describe('WatchBuffer', () => {
  it('holds events by their bytes; full, it makes the cells’ readers wait until its client takes some', async () => {
    const buffer = new WatchBuffer<string>({ perWatchBytes: 100, stallMs: 1_000 });
    buffer.push('a', 60);
    expect(buffer.full).toBe(false);
    buffer.push('b', 60);
    expect(buffer.full).toBe(true);
    let roomMade = false;
    const room = buffer.room(new AbortController().signal, false).then((answer) => {
      roomMade = true;
      return answer;
    });
    await Promise.resolve();
    expect(roomMade).toBe(false);
    expect(buffer.shift()).toBe('a');
    expect(await room).toBe('room');
    expect(buffer.held).toBe(60);
  });

  it('answers stalled once a live watch’s client takes nothing for stallMs, never for initial events', async () => {
    const clock = new FakeClock();
    const buffer = new WatchBuffer<string>({ perWatchBytes: 10, stallMs: 1_000 }, clock);
    buffer.push('a', 20);
    const live = buffer.room(new AbortController().signal, true);
    let initialAnswered = false;
    void buffer.room(new AbortController().signal, false).then(() => (initialAnswered = true));
    await clock.advance(1_000);
    expect(await live).toBe('stalled');
    await clock.advance(60_000);
    expect(initialAnswered).toBe(false);
    buffer.shift();
    await new Promise((resolve) => setImmediate(resolve));
    expect(initialAnswered).toBe(true);
  });

  it('counts every watch in the router’s budget: one full budget holds every watch back, and gives back', () => {
    const budget = new WatchBytesBudget(100);
    const one = new WatchBuffer<string>({ perWatchBytes: 1_000, stallMs: 1_000, budget });
    const two = new WatchBuffer<string>({ perWatchBytes: 1_000, stallMs: 1_000, budget });
    one.push('a', 100);
    expect(two.full).toBe(true);
    expect(one.shift()).toBe('a');
    expect(two.full).toBe(false);
    expect(budget.held).toBe(0);
  });
});
