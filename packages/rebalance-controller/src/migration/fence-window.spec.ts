import { FenceWindow, type FencePermit } from './fence-window.ts';

/** Takes every permit the window grants now, for keys k0, k1, … */
function takeAll(window: FenceWindow): FencePermit[] {
  return Array.from({ length: window.size - window.holding }, (_, i) => window.tryAcquire(`k${i}`)!);
}

describe('FenceWindow', () => {
  it('starts at a quarter of the most moves, and grows by one per window of fences on time', () => {
    const window = new FenceWindow({ max: 32, targetMs: 200 });
    expect(window.size).toBe(8);
    for (let fence = 0; fence < 9; fence++) window.tryAcquire('k')!.release(50);
    expect(window.size).toBe(9);
    for (let fence = 0; fence < 1000; fence++) window.tryAcquire('k')!.release(50);
    expect(window.size).toBe(32);
  });

  it('shrinks to 70% when a fence runs over the target, once for a burst of slow fences, never below a quarter', () => {
    const sizes: number[] = [];
    const window = new FenceWindow({ max: 32, targetMs: 200, onSize: (size) => sizes.push(size) });
    while (window.size < 20) window.tryAcquire('k')!.release(50);
    const permits = takeAll(window);
    expect(permits).toHaveLength(20);
    // Every move of the window saw its fence run long: one decrease, not twenty.
    for (const permit of permits) permit.release(900);
    expect(window.size).toBe(14);
    // A move that starts after the decrease and is slow too takes it down again.
    window.tryAcquire('k')!.release(900);
    expect(window.size).toBe(9);
    // Slower cells than the moves make: a quarter of the most is as low as it goes.
    for (let fence = 0; fence < 20; fence++) window.tryAcquire('k')!.release(900);
    expect(window.size).toBe(8);
    expect(sizes.slice(-3)).toEqual([14, 9, 8]);
  });

  it('holds no worker for a key that finds it full: wakes the waiting keys, oldest first, as permits free', () => {
    const woken: string[] = [];
    const window = new FenceWindow({ max: 8, targetMs: 200, wake: (key) => woken.push(key) });
    const [first, second] = takeAll(window);
    expect(window.size).toBe(2);
    expect(window.tryAcquire('a')).toBeUndefined();
    expect(window.tryAcquire('b')).toBeUndefined();
    expect(window.tryAcquire('a')).toBeUndefined();
    expect(woken).toEqual([]);

    first!.release(50);
    expect(woken).toEqual(['a']);
    // 'a' takes the permit it was woken for; 'b' is woken by the next one.
    const forA = window.tryAcquire('a')!;
    second!.release(50);
    expect(woken).toEqual(['a', 'b']);
    // A woken key whose object no longer needs a move never comes back: it is not woken again.
    forA.release(50);
    expect(woken).toEqual(['a', 'b']);
    expect(window.tryAcquire('c')).toBeDefined();
  });

  it('always admits a move whose object is already fenced, and counts it', () => {
    const window = new FenceWindow({ max: 4, targetMs: 200 });
    const held = takeAll(window);
    expect(held).toHaveLength(1);
    const resumed = window.acquireFenced();
    expect(window.holding).toBe(2);
    held[0]!.release();
    expect(window.tryAcquire('new')).toBeUndefined();
    resumed.release();
    expect(window.tryAcquire('new')).toBeDefined();
  });

  it('holds the window at its most when there is no target, and counts a permit once', () => {
    const window = new FenceWindow({ max: 6, targetMs: 0 });
    expect(window.size).toBe(6);
    const permits = takeAll(window);
    for (const permit of permits) permit.release(10_000);
    permits[0]!.release(10_000);
    expect(window.size).toBe(6);
    expect(window.holding).toBe(0);
  });
});
