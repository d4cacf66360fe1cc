import { FenceWindow, type FencePermit } from './fence-window.ts';

const never = new AbortController().signal;

/** Takes every permit the window grants at once. */
async function takeAll(window: FenceWindow): Promise<FencePermit[]> {
  const permits: FencePermit[] = [];
  while (window.holding < window.size) permits.push((await window.acquire(never))!);
  return permits;
}

describe('FenceWindow', () => {
  it('starts at a quarter of the most moves, and grows by one per window of fences on time', async () => {
    const window = new FenceWindow({ max: 32, targetMs: 200 });
    expect(window.size).toBe(8);
    for (let fence = 0; fence < 9; fence++) (await window.acquire(never))!.release(50);
    expect(window.size).toBe(9);
    for (let fence = 0; fence < 1000; fence++) (await window.acquire(never))!.release(50);
    expect(window.size).toBe(32);
  });

  it('shrinks to 70% when a fence runs over the target, once for a burst of slow fences', async () => {
    const sizes: number[] = [];
    const window = new FenceWindow({ max: 32, targetMs: 200, onSize: (size) => sizes.push(size) });
    const permits = await takeAll(window);
    expect(permits).toHaveLength(8);
    // Every move of the window saw its fence run long: one decrease, not eight.
    for (const permit of permits) permit.release(900);
    expect(window.size).toBe(5);
    // A move that starts after the decrease and is slow too takes it down again.
    (await window.acquire(never))!.release(900);
    expect(window.size).toBe(3);
    for (let fence = 0; fence < 20; fence++) (await window.acquire(never))!.release(900);
    expect(window.size).toBe(1);
    expect(sizes).toEqual([8, 5, 3, 2, 1]);
  });

  it('makes moves wait for a permit beyond its size, in order, and lets an aborted wait go', async () => {
    const window = new FenceWindow({ max: 4, targetMs: 200 });
    const [held] = await takeAll(window);
    expect(window.size).toBe(1);
    const order: string[] = [];
    const gone = new AbortController();
    const first = window.acquire(never).then((permit) => (order.push('first'), permit));
    const abandoned = window.acquire(gone.signal).then((permit) => (order.push('abandoned'), permit));
    const second = window.acquire(never).then((permit) => (order.push('second'), permit));
    gone.abort();
    expect(await abandoned).toBeUndefined();
    held!.release(50);
    (await first)!.release();
    (await second)!.release();
    expect(order).toEqual(['abandoned', 'first', 'second']);
    expect(window.holding).toBe(0);
  });

  it('holds the window at its most when there is no target, and counts a permit once', async () => {
    const window = new FenceWindow({ max: 6, targetMs: 0 });
    expect(window.size).toBe(6);
    const permits = await takeAll(window);
    for (const permit of permits) permit.release(10_000);
    permits[0]!.release(10_000);
    expect(window.size).toBe(6);
    expect(window.holding).toBe(0);
  });
});
