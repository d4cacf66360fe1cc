/** Per-key exponential backoff: base·2^failures, capped (client-go's ItemExponentialFailureRateLimiter). */
export interface BackoffOptions {
  /** Delay after the first failure. Default 5 ms, as controller-runtime. */
  baseMs?: number;
  /** Longest delay. Default 1000 s, as controller-runtime. */
  maxMs?: number;
}

export class ItemBackoff {
  private readonly failures = new Map<string, number>();
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 5;
    this.maxMs = options.maxMs ?? 1_000_000;
  }

  /** Records one more failure of `key` and returns how long to wait before its next try. */
  next(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    // 2^failures overflows to Infinity long after the cap is reached; Math.min keeps it finite.
    return Math.min(this.maxMs, this.baseMs * 2 ** failures);
  }

  /** Failures recorded for `key` since it was last forgotten. */
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }
}
