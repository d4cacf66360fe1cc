/** A token bucket: `qps` tokens per second, at most `burst` saved up. Time comes from the caller. */
export class TokenBucket {
  private readonly qps: number;
  private readonly burst: number;
  private tokens: number;
  private last: number;

  constructor(qps: number, burst: number, now: number) {
    if (!(qps > 0) || !(burst >= 1)) throw new RangeError(`token bucket needs qps > 0 and burst ≥ 1`);
    this.qps = qps;
    this.burst = burst;
    this.tokens = burst;
    this.last = now;
  }

  /** Takes one token if there is one. */
  tryTake(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until a token is available (0 if one is). */
  waitMs(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.qps) * 1000);
  }

  private refill(now: number): void {
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
      this.last = now;
    }
  }
}
