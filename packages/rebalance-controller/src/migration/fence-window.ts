export interface FenceWindowOptions {
  /** Moves fenced at once at most (`--window`). */
  max: number;
  /** The fence time to stay under (`--fence-target`); 0: no adapting, always `max`. */
  targetMs: number;
  /** Told the size whenever it changes (and once at the start), for the metric. */
  onSize?: (size: number) => void;
}

/** The window's share kept after a fence over the target (TCP's multiplicative decrease, gentler). */
const DECREASE = 0.7;

/** One move's right to fence its object; given back once, with the fence time it saw. */
export interface FencePermit {
  /** `fenceMs`: how long the move kept its object fenced; none when it fenced nothing. */
  release(fenceMs?: number): void;
}

/**
 * How many moves may hold a fence at once, adapted to the fence times they report (AIMD, as TCP adapts its
 * congestion window to loss): every fence within the target adds 1/window (one more move per window of
 * fences on time); a fence over it takes the window down to 70%, once per window of moves (a move that
 * started before the last decrease does not count again), so one burst of slow fences counts once. A fence
 * is apiserver queueing in the two cells, so fewer moves at once shortens every fence, and more moves fill
 * cells that have room. The window starts at a quarter of `max` and never goes below one move.
 */
export class FenceWindow {
  private readonly max: number;
  private readonly targetMs: number;
  private readonly onSize: ((size: number) => void) | undefined;
  private window: number;
  private inFlight = 0;
  /** Permits are numbered as they are granted; a decrease remembers the next number. */
  private granted = 0;
  private countsFrom = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(options: FenceWindowOptions) {
    this.max = options.max;
    this.targetMs = options.targetMs;
    this.window = options.targetMs > 0 ? Math.max(1, Math.floor(options.max / 4)) : options.max;
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

  /** A permit to fence one more object, once fewer than `size` moves hold one; none when `signal` aborted first. */
  acquire(signal: AbortSignal): Promise<FencePermit | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (this.inFlight < this.size && this.waiters.length === 0) return Promise.resolve(this.grant());
    return new Promise((resolve) => {
      const granted = () => {
        signal.removeEventListener('abort', aborted);
        resolve(this.grant());
      };
      const aborted = () => {
        const at = this.waiters.indexOf(granted);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(undefined);
      };
      this.waiters.push(granted);
      signal.addEventListener('abort', aborted, { once: true });
    });
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
        while (this.waiters.length > 0 && this.inFlight < this.size) this.waiters.shift()!();
      },
    };
  }

  private adapt(fenceMs: number, permit: number): void {
    const size = this.size;
    if (fenceMs <= this.targetMs) {
      this.window = Math.min(this.max, this.window + 1 / this.window);
    } else if (permit >= this.countsFrom) {
      this.countsFrom = this.granted;
      this.window = Math.max(1, this.window * DECREASE);
    }
    if (this.size !== size) this.onSize?.(this.size);
  }
}
