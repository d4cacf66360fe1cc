import { Fifo, realClock, type Clock } from '@cellfed/controller-kit';

/** The bytes every merged watch of a router holds for its client together (one per router). */
export class WatchBytesBudget {
  private heldBytes = 0;
  readonly totalBytes: number;

  constructor(totalBytes: number) {
    this.totalBytes = totalBytes;
  }

  add(bytes: number): void {
    this.heldBytes += bytes;
  }

  get held(): number {
    return this.heldBytes;
  }

  get spent(): boolean {
    return this.heldBytes >= this.totalBytes;
  }
}

export interface WatchBufferLimits {
  /** Bytes of cells' events one watch holds for its client before it stops reading its cells. */
  readonly perWatchBytes: number;
  /** Shared by every watch: past it, every watch stops reading its cells until its client takes some. */
  readonly budget?: WatchBytesBudget | undefined;
  /**
   * How long a live watch (its initial events all sent) may hold a full buffer its client takes nothing
   * from before it is ended: the client resumes from the last event it read, as after kube-apiserver ends a
   * watch whose client is too slow.
   */
  readonly stallMs: number;
}

export const DEFAULT_WATCH_BUFFER: WatchBufferLimits = { perWatchBytes: 8 * 1024 * 1024, stallMs: 10_000 };

/**
 * The events one merged watch holds for its client, in arrival order, counted in bytes (as they came from
 * the cells). Full (its own limit, or the router's budget), it makes the cells' readers wait (the cells then
 * hold their events, or end their watches, which are resumed), so a client that reads slowly never makes the
 * router hold more than the limit for it; a live watch whose client takes nothing for `stallMs` while it is
 * full is ended (see {@link WatchBufferLimits.stallMs}).
 */
export class WatchBuffer<T> {
  private readonly limits: WatchBufferLimits;
  private readonly clock: Clock;
  private readonly items = new Fifo<{ item: T; bytes: number }>();
  private heldBytes = 0;
  private waiters: (() => void)[] = [];
  private wakeReader: (() => void) | undefined;

  constructor(limits: WatchBufferLimits, clock: Clock = realClock) {
    this.limits = limits;
    this.clock = clock;
  }

  push(item: T, bytes = 0): void {
    this.items.push({ item, bytes });
    this.heldBytes += bytes;
    this.limits.budget?.add(bytes);
    this.wakeReader?.();
  }

  shift(): T | undefined {
    const next = this.items.shift();
    if (!next) return undefined;
    this.heldBytes -= next.bytes;
    this.limits.budget?.add(-next.bytes);
    if (!this.full && this.waiters.length > 0) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const resolve of waiters) resolve();
    }
    return next.item;
  }

  get length(): number {
    return this.items.length;
  }

  /** Bytes held now. */
  get held(): number {
    return this.heldBytes;
  }

  get full(): boolean {
    return this.heldBytes >= this.limits.perWatchBytes || (this.limits.budget?.spent ?? false);
  }

  /** Resolves once an item is pushed (or `signal` aborts): the client's writer waits here when empty. */
  nextItem(signal: AbortSignal): Promise<void> {
    if (this.items.length > 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.wakeReader = undefined;
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.wakeReader = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Resolves when there is room for a cell's next event: at once if not full. `mayEnd`: a live watch, which
   * answers `stalled` after `stallMs` full without its client taking anything.
   */
  async room(signal: AbortSignal, mayEnd: boolean): Promise<'room' | 'stalled'> {
    while (this.full && !signal.aborted) {
      const waited = await new Promise<'room' | 'stalled'>((resolve) => {
        const timer = mayEnd ? this.clock.setTimer(this.limits.stallMs, () => resolve('stalled')) : undefined;
        const onAbort = () => {
          timer?.cancel();
          resolve('room');
        };
        signal.addEventListener('abort', onAbort, { once: true });
        this.waiters.push(() => {
          timer?.cancel();
          signal.removeEventListener('abort', onAbort);
          resolve('room');
        });
      });
      if (waited === 'stalled' && this.full && !signal.aborted) return 'stalled';
    }
    return 'room';
  }
}
