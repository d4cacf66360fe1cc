import type { Clock, ControllerOptions } from '@cellfed/controller-kit';

/**
 * One of the rebalance controller's controllers as the process runs it: its caches for the life of the
 * process (a replica that becomes leader starts warm), its workers only while this replica leads. Each maps
 * the events it cares about to its own keys when it is built (controller-runtime's `Watches`).
 */
export interface LeadingController {
  /** Runs its own caches until `signal` aborts; the shared ones are run by the rebalance controller. */
  runCaches?(signal: AbortSignal): Promise<void>;
  /** Resolves once its own caches are listed. */
  waitForSync?(signal: AbortSignal): Promise<unknown>;
  /** Queues what it looks at on taking the lead, and starts its workers. */
  start(): void;
  /** Stops its workers, waiting a while for the reconciles in hand. */
  stop(): Promise<unknown>;
}

/** The runner's settings every controller shares (see Controller). */
export type RunnerSettings = Pick<ControllerOptions<unknown>, 'registry' | 'logger' | 'tracer'> & {
  clock: Clock;
};

/** A runner's settings apart from what names a controller and its keys. */
export type RunnerOptions = Omit<ControllerOptions<unknown>, 'name' | 'reconciler' | 'keys' | 'cellOf'> & {
  clock: Clock;
};

/**
 * The settings of the background controllers (the collector, the followers, the quotas and the kinds copied
 * into cells): two workers, scans rate-limited, slower backoff than the migrations.
 */
export function backgroundRunner(runner: RunnerSettings, scanQps: number): RunnerOptions {
  return {
    ...runner,
    workers: 2,
    lowLane: { qps: scanQps, burst: 100 },
    backoff: { baseMs: 500, maxMs: 60_000 },
  };
}
