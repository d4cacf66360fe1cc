export type CellHealth = 'Unknown' | 'Healthy' | 'Unhealthy';

export interface HysteresisOptions {
  /** Consecutive failed probes before a cell is Unhealthy. Default 3. */
  failureThreshold?: number;
  /** Consecutive good probes before an Unhealthy cell is Healthy again. Default 2. */
  successThreshold?: number;
}

/**
 * Turns probe results into a health that does not flap: several failures in a row before Unhealthy,
 * several successes in a row before Healthy again. A cell never probed is Unknown; its first good probe
 * makes it Healthy, so a new cell is usable at once.
 */
export class HealthHysteresis {
  private state: CellHealth = 'Unknown';
  private failures = 0;
  private successes = 0;
  private readonly failureThreshold: number;
  private readonly successThreshold: number;

  constructor(options: HysteresisOptions = {}) {
    this.failureThreshold = options.failureThreshold ?? 3;
    this.successThreshold = options.successThreshold ?? 2;
  }

  get health(): CellHealth {
    return this.state;
  }

  /** Records one probe; returns the new health if it changed. */
  observe(ok: boolean): CellHealth | undefined {
    if (ok) {
      this.failures = 0;
      this.successes++;
      const needed = this.state === 'Unknown' ? 1 : this.successThreshold;
      if (this.state !== 'Healthy' && this.successes >= needed) return this.set('Healthy');
    } else {
      this.successes = 0;
      this.failures++;
      if (this.state !== 'Unhealthy' && this.failures >= this.failureThreshold) return this.set('Unhealthy');
    }
    return undefined;
  }

  private set(state: CellHealth): CellHealth {
    this.state = state;
    return state;
  }
}
