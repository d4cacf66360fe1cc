import { eventually } from './clients.ts';
import { isRunning, stopController, type ControllerProcess } from './controller-process.ts';

/**
 * Leader election for the tests that kill leaders: leases short enough for many takeovers in a test's time,
 * and a renew deadline that a new leader meets on a loaded two-core machine (at 3 s, leaders taking over a
 * 5000-object rebalance stepped down within seconds, one after another).
 */
export const KILL_TEST_LEADER_ELECTION: readonly string[] = [
  ...['--leader-elect-lease-duration', '8s', '--leader-elect-renew-deadline', '6s'],
  ...['--leader-elect-retry-period', '1s'],
];

/** A replica's log line that says it became leader at or after `after` (ms since the epoch). */
export function becameLeader(replica: ControllerProcess, after = 0): Record<string, unknown> | undefined {
  return replica.lines.find((line) => line.msg === 'became leader' && Number(line.time) >= after);
}

/** Whether it leads now: running, and its last word on the Lease is that it became leader. */
function leads(replica: ControllerProcess): boolean {
  return (
    isRunning(replica.child) &&
    replica.lines.findLast(
      (line) =>
        line.msg === 'became leader' ||
        line.msg === 'released the Lease' ||
        String(line.msg).startsWith('leadership lost'),
    )?.msg === 'became leader'
  );
}

/**
 * Two replicas of a controller with leader election, kept as a Deployment keeps them. A replica that exits
 * (a leader that could not renew its Lease in time steps down by exiting, as it must) is replaced, as the
 * kubelet would, before the pair is next asked for its leader: a kill then always leaves a standby. On a
 * loaded two-core machine a leader does sometimes miss its renew deadline; the tests count those
 * (`leadershipChanges`) rather than fail on them.
 */
export class ReplicaPair {
  /** Every replica started, in order (the first two, then each replacement). */
  readonly started: ControllerProcess[] = [];
  private readonly pair: ControllerProcess[] = [];

  private readonly start: (index: number) => Promise<ControllerProcess>;

  /** `start(index)` starts one replica (index: how many were started before it). */
  constructor(start: (index: number) => Promise<ControllerProcess>) {
    this.start = start;
  }

  /** Starts both replicas. */
  async run(): Promise<void> {
    this.pair.push(await this.startOne(), await this.startOne());
  }

  /** The leader now, with a standby running beside it. */
  async leaderWithStandby(timeoutMs = 30_000): Promise<ControllerProcess> {
    for (const [index, replica] of this.pair.entries())
      if (!isRunning(replica.child)) this.pair[index] = await this.startOne();
    return eventually('one replica to lead', async () => this.pair.find(leads), timeoutMs);
  }

  /**
   * SIGKILLs `leader`; resolves with the replica that took over after the kill and how long that took. A
   * replacement for the killed one is started once the standby leads, so the next kill has a standby too.
   */
  async killLeader(
    leader: ControllerProcess,
    timeoutMs = 30_000,
  ): Promise<{ next: ControllerProcess; takeoverMs: number }> {
    const killedAt = Date.now();
    await stopController(leader, 'SIGKILL');
    const next = await eventually(
      'another replica to take over',
      // Whoever won the Lease after the kill took over, even if it has lost it again since (a missed renew
      // deadline): the next leaderWithStandby() finds the leader of the moment.
      async () => this.started.find((one) => one !== leader && becameLeader(one, killedAt)),
      timeoutMs,
    );
    await this.leaderWithStandby();
    return { next, takeoverMs: Number(becameLeader(next, killedAt)!.time) - killedAt };
  }

  /** How often leadership passed from one replica to another, kills included. */
  leadershipChanges(): number {
    const won = this.started.reduce(
      (sum, replica) => sum + replica.lines.filter((line) => line.msg === 'became leader').length,
      0,
    );
    return Math.max(0, won - 1);
  }

  async stop(): Promise<void> {
    for (const replica of this.started) await stopController(replica);
  }

  private async startOne(): Promise<ControllerProcess> {
    const replica = await this.start(this.started.length);
    this.started.push(replica);
    return replica;
  }
}
