/** How much one caller may hold at once. */
export interface CallerLimitsOptions {
  /** Requests in flight that are not long-running. */
  readonly maxRequestsInFlight: number;
  /** Long-running requests open at once: watches, followed logs, exec and port-forward tunnels. */
  readonly maxLongRunning: number;
  /**
   * Long-running requests open at once for all callers together: what the router's memory carries (a
   * watch holds a connection to every cell it reads); none: no such bound.
   */
  readonly maxLongRunningTotal?: number;
}

/**
 * Per-caller limits on what is open at once, so that no single identity can hold every socket, stream and
 * cell connection of the router: past a limit the request gets a 429 with Retry-After, as kube-apiserver's
 * flow control answers. A caller is held to the limits of each of its keys (server/body-budget.ts's
 * `callerKeys`: its user name, and a ServiceAccount's namespace), so a tenant that mints ServiceAccounts
 * shares one namespace's limits among them; long-running requests are bounded for everyone together too.
 * Memory is bounded by the keys with something open: an entry goes with its last request.
 */
export class CallerLimits {
  private readonly options: CallerLimitsOptions;
  private readonly open = new Map<string, { requests: number; longRunning: number }>();
  /** Long-running requests open for everyone together. */
  private longRunningTotal = 0;

  constructor(options: CallerLimitsOptions) {
    this.options = options;
  }

  /**
   * A slot for one request under every one of a caller's `keys`, released by the function returned;
   * undefined (nothing held) past the limit of any.
   */
  acquire(keys: string | readonly string[], longRunning: boolean): (() => void) | undefined {
    const all = typeof keys === 'string' ? [keys] : keys;
    const kind = longRunning ? 'longRunning' : 'requests';
    const limit = longRunning ? this.options.maxLongRunning : this.options.maxRequestsInFlight;
    if (all.some((key) => (this.open.get(key)?.[kind] ?? 0) >= limit)) return undefined;
    const total = this.options.maxLongRunningTotal;
    if (longRunning && total !== undefined && this.longRunningTotal >= total) return undefined;
    if (longRunning) this.longRunningTotal++;
    const held = all.map((key) => {
      const entry = this.open.get(key) ?? { requests: 0, longRunning: 0 };
      entry[kind]++;
      this.open.set(key, entry);
      return [key, entry] as const;
    });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (longRunning) this.longRunningTotal--;
      for (const [key, entry] of held) {
        entry[kind]--;
        if (entry.requests === 0 && entry.longRunning === 0) this.open.delete(key);
      }
    };
  }

  /** Callers with something open (a gauge, and the bound tests check). */
  get callers(): number {
    return this.open.size;
  }
}
