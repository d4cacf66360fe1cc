/** How much one caller may hold at once. */
export interface CallerLimitsOptions {
  /** Requests in flight that are not long-running. */
  readonly maxRequestsInFlight: number;
  /** Long-running requests open at once: watches, followed logs, exec and port-forward tunnels. */
  readonly maxLongRunning: number;
}

/**
 * Per-caller limits on what is open at once, so that no single identity can hold every socket, stream and
 * cell connection of the router: past a limit the request gets a 429 with Retry-After, as kube-apiserver's
 * flow control answers. Memory is bounded by the callers with something open: an entry goes with its last
 * request.
 */
export class CallerLimits {
  private readonly options: CallerLimitsOptions;
  private readonly open = new Map<string, { requests: number; longRunning: number }>();

  constructor(options: CallerLimitsOptions) {
    this.options = options;
  }

  /** A slot for one request of `caller`, released by the function returned; undefined past the limit. */
  acquire(caller: string, longRunning: boolean): (() => void) | undefined {
    const held = this.open.get(caller) ?? { requests: 0, longRunning: 0 };
    const kind = longRunning ? 'longRunning' : 'requests';
    const limit = longRunning ? this.options.maxLongRunning : this.options.maxRequestsInFlight;
    if (held[kind] >= limit) return undefined;
    held[kind]++;
    this.open.set(caller, held);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held[kind]--;
      if (held.requests === 0 && held.longRunning === 0) this.open.delete(caller);
    };
  }

  /** Callers with something open (a gauge, and the bound tests check). */
  get callers(): number {
    return this.open.size;
  }
}
