import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

import { realClock, sleep, untilAborted, type Clock } from '../clock.ts';
import { errorMessage } from '../errors.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { LeaderElector } from '../leader/leader-elector.ts';
import { HealthServer, type Check } from './health-server.ts';
import type { ManagerConfig } from './manager-config.ts';

/** Work the manager runs until its signal aborts. */
export type Runnable = (signal: AbortSignal) => Promise<void>;

export interface ManagerOptions {
  /** The controller's name: logs, the Lease's default name. */
  name: string;
  config: ManagerConfig;
  logger: Logger;
  registry: Registry;
  /** The router control plane, which holds the Lease. */
  controlPlane: Pick<KubeClient, 'request'>;
  clock?: Clock;
}

/**
 * The process shell every controller runs in (controller-runtime's manager): the health server, leader
 * election, runnables that always run (caches, the cell pool) and runnables that run only while leading
 * (controllers). `stop` (SIGTERM) aborts everything and gives work in hand `gracefulShutdownMs`; losing
 * leadership stops the leader's work at once and ends `start` with `leadershipLost`, and main exits
 * non-zero so the next process starts clean, as controller-runtime does.
 */
export class Manager {
  readonly server: HealthServer;
  readonly identity: string;
  private readonly options: ManagerOptions;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly always: Runnable[] = [];
  private readonly leaderOnly: Runnable[] = [];
  private readonly stopping = new AbortController();
  private elector: LeaderElector | undefined;

  constructor(options: ManagerOptions) {
    this.options = options;
    this.log = options.logger;
    this.clock = options.clock ?? realClock;
    this.server = new HealthServer(options.registry);
    this.identity = `${hostname()}_${randomBytes(4).toString('hex')}`;
    this.server.addHealthCheck('ping', () => true);
    this.server.addReadyCheck('shutdown', () => !this.stopping.signal.aborted || 'shutting down');
  }

  /** Runs `runnable` for the life of the process, or only while leading. */
  add(runnable: Runnable, options: { needLeaderElection: boolean }): void {
    (options.needLeaderElection ? this.leaderOnly : this.always).push(runnable);
  }

  addReadyCheck(name: string, check: Check): void {
    this.server.addReadyCheck(name, check);
  }

  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : true;
  }

  /** Aborts everything once SIGTERM or SIGINT arrives. */
  installSignalHandlers(): void {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        this.log.info({ signal }, 'shutting down');
        this.stop();
      });
    }
  }

  stop(): void {
    this.stopping.abort(new Error('manager stopping'));
  }

  /** Serves, campaigns, runs; resolves after shutdown with whether leadership was lost. */
  async start(): Promise<{ leadershipLost: boolean }> {
    const { config } = this.options;
    const address = await this.server.listen(config.httpHost, config.httpPort);
    this.log.info(
      { address: `${address.address}:${address.port}`, httpPort: address.port, identity: this.identity },
      'serving /metrics, /healthz, /readyz',
    );
    const signal = this.stopping.signal;
    const tasks = this.always.map((runnable) => this.guard(runnable, signal));
    let leadershipLost = false;
    if (config.leaderElection.enabled && this.leaderOnly.length > 0) {
      const election = config.leaderElection;
      const elector = new LeaderElector({
        client: this.options.controlPlane,
        namespace: election.namespace,
        name: election.name ?? this.options.name,
        identity: this.identity,
        logger: this.log,
        registry: this.options.registry,
        clock: this.clock,
        leaseDurationMs: election.leaseDurationMs,
        renewDeadlineMs: election.renewDeadlineMs,
        retryPeriodMs: election.retryPeriodMs,
      });
      this.elector = elector;
      this.addReadyCheck(
        'leader-election',
        () => elector.leaderStateKnown() || 'the Lease has not been read yet',
      );
      const leaderTasks: Promise<void>[] = [];
      tasks.push(
        elector.run(signal, {
          onStartedLeading: (leading) => {
            for (const runnable of this.leaderOnly) leaderTasks.push(this.guard(runnable, leading));
          },
          onStoppedLeading: () => {
            leadershipLost = true;
            this.stop();
          },
        }),
      );
      tasks.push(untilAborted(signal).then(() => Promise.all(leaderTasks).then(() => undefined)));
    } else {
      for (const runnable of this.leaderOnly) tasks.push(this.guard(runnable, signal));
    }
    await untilAborted(signal);
    const drained = await Promise.race([
      Promise.all(tasks).then(() => true),
      sleep(this.clock, config.gracefulShutdownMs).then(() => false),
    ]);
    if (!drained)
      this.log.warn(
        { gracefulShutdownMs: config.gracefulShutdownMs },
        'shutdown bound reached; exiting with work unfinished',
      );
    await this.server.close();
    this.log.info({ leadershipLost }, 'stopped');
    return { leadershipLost };
  }

  /** A runnable that throws is logged and stops the process: running half a controller helps nobody. */
  private guard(runnable: Runnable, signal: AbortSignal): Promise<void> {
    return runnable(signal).catch((error: unknown) => {
      this.log.error({ err: errorMessage(error) }, 'a runnable failed; stopping');
      this.stop();
    });
  }
}
