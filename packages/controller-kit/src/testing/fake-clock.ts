import type { Clock, Timer } from '../clock.ts';

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told. `advance` fires due timers in time order and lets the promise callbacks
 * they trigger run before the next one, so code awaiting timers observes the same order as in real time.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const timer: PendingTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Timers not yet fired or cancelled. */
  pendingTimers(): number {
    return this.timers.filter((timer) => !timer.cancelled).length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    const end = this.current + ms;
    for (;;) {
      await flushPromises();
      this.timers = this.timers.filter((timer) => !timer.cancelled);
      const next = this.timers.reduce<PendingTimer | undefined>(
        (earliest, timer) =>
          timer.at <= end &&
          (!earliest || timer.at < earliest.at || (timer.at === earliest.at && timer.seq < earliest.seq))
            ? timer
            : earliest,
        undefined,
      );
      if (!next) break;
      this.current = Math.max(this.current, next.at);
      next.cancelled = true;
      next.fn();
    }
    this.current = end;
    await flushPromises();
  }
}

/** Lets every queued promise callback (and the ones they queue) run. */
export async function flushPromises(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
