export interface FenceWindowOptions {
  /** Moves fenced at once at most (`--window`). */
  max: number;
  /** The fence time to stay under (`--fence-target`); 0: no adapting, always `max`. */
  targetMs: number;
  /**
   * Called with a key that found the window full, once a permit is free for it: the controller queues it
   * again (no worker waits for a permit).
   */
  wake?: (key: string) => void;
  /** Told the size whenever it changes (and once at the start), for the metric. */
  onSize?: (size: number) => void;
}

/** The window's share kept after a fence over the target (TCP's multiplicative decrease, gentler). */
const DECREASE = 0.7;

/** One move's right to fence its object; given back once, with the fence time it saw. */
export interface FencePermit {
  /** `fenceMs`: how long the move kept its object fenced; none when it fenced nothing or did not finish. */
  release(fenceMs?: number): void;
}

/**
 * How many moves may hold a fence at once, adapted to the fence times they report (AIMD, as TCP adapts its
 * congestion window to loss): every fence within the target adds 1/window (one more move per window of
 * fences on time); a fence over it takes the window down to 70%, once per window of moves (a move that
 * started before the last decrease does not count again), so one burst of slow fences counts once. A fence
 * is apiserver queueing in the two cells, so fewer moves at once shortens every fence, and more moves fill
 * cells that have room. The window starts at a quarter of `max` and never goes below it: when the cells are
 * slow for reasons other than the moves (their own clients, a busy machine), fewer moves would not make
 * fences shorter, only the rebalance longer, so the slowdown the window can cause is bounded (4×).
 *
 * A new move that finds the window full holds no worker: its key is remembered and handed to `wake`, oldest
 * first, when a permit frees (it then competes for it again, and waits again if it lost). A move that finds its object already fenced (resumed) always gets a permit: waiting would
 * only make its fence longer, and it still counts against the window.
 */
export class FenceWindow {
  private readonly max: number;
  private readonly min: number;
  private readonly targetMs: number;
  private readonly wake: ((key: string) => void) | undefined;
  private readonly onSize: ((size: number) => void) | undefined;
  private window: number;
  private inFlight = 0;
  /** Permits are numbered as they are granted; a decrease remembers the next number. */
  private granted = 0;
  private countsFrom = 0;
  /** Keys that found the window full, in the order they came. */
  private readonly waiting = new Set<string>();

  constructor(options: FenceWindowOptions) {
    this.max = options.max;
    this.targetMs = options.targetMs;
    this.wake = options.wake;
    this.min = options.targetMs > 0 ? Math.max(1, Math.floor(options.max / 4)) : options.max;
    this.window = this.min;
    this.onSize = options.onSize;
    this.onSize?.(this.size);
  }

  /** Moves that may hold a fence at once now. */
  get size(): number {
    return Math.max(1, Math.floor(this.window));
  }

  /** Moves holding a permit now. */
  get holding(): number {
    return this.inFlight;
  }

  /** A permit for `key`'s new move, if fewer than `size` moves hold one; otherwise none, and `key` is woken when one frees. */
  tryAcquire(key: string): FencePermit | undefined {
    if (this.inFlight < this.size) {
      this.waiting.delete(key);
      return this.grant();
    }
    this.waiting.add(key);
    return undefined;
  }

  /** A permit for a move whose object is already fenced: always granted, and counted. */
  acquireFenced(): FencePermit {
    return this.grant();
  }

  private grant(): FencePermit {
    this.inFlight++;
    const number = this.granted++;
    let released = false;
    return {
      release: (fenceMs) => {
        if (released) return;
        released = true;
        this.inFlight--;
        if (fenceMs !== undefined && this.targetMs > 0) this.adapt(fenceMs, number);
        this.wakeWaiting();
      },
    };
  }

  /**
   * Hands as many waiting keys as there are free permits to `wake`, and forgets them: one that comes back to
   * a full window waits again; one that no longer needs a move (its object went) is not woken forever.
   */
  private wakeWaiting(): void {
    let free = this.size - this.inFlight;
    for (const key of this.waiting) {
      if (free-- <= 0) return;
      this.waiting.delete(key);
      this.wake?.(key);
    }
  }

  private adapt(fenceMs: number, permit: number): void {
    const size = this.size;
    if (fenceMs <= this.targetMs) {
      this.window = Math.min(this.max, this.window + 1 / this.window);
    } else if (permit >= this.countsFrom) {
      this.countsFrom = this.granted;
      this.window = Math.max(this.min, this.window * DECREASE);
    }
    if (this.size !== size) this.onSize?.(this.size);
  }
}
