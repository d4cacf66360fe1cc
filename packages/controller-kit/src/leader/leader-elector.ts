import type { Logger } from 'pino';
import type { Gauge, Registry } from 'prom-client';

import { realClock, sleep, type Clock } from '../clock.ts';
import { errorMessage } from '../errors.ts';
import { isConflict, isNotFound } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { gauge } from '../metrics/registry-metrics.ts';
import { microTime } from './micro-time.ts';

export interface LeaderElectionOptions {
  client: Pick<KubeClient, 'request'>;
  namespace: string;
  /** The Lease's name, e.g. `cellfed-rebalance-controller`. */
  name: string;
  /** Unique per process: pod name plus a random suffix. */
  identity: string;
  logger: Logger;
  registry?: Registry;
  clock?: Clock;
  /** How long a Lease stays valid without renewal. Default 15 s (controller-runtime). */
  leaseDurationMs?: number;
  /** A leader that cannot renew for this long steps down. Default 10 s. */
  renewDeadlineMs?: number;
  /** Time between attempts to acquire or renew. Default 2 s. */
  retryPeriodMs?: number;
  random?: () => number;
}

export interface LeaderCallbacks {
  /** Leadership won; `signal` aborts the moment it is lost or the elector stops. */
  onStartedLeading(signal: AbortSignal): void;
  /** Leadership lost (not called on a clean stop, where the Lease is released). */
  onStoppedLeading?(): void;
  onNewLeader?(identity: string): void;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's leaderelection does it: a candidate
 * takes the Lease when its holder has not renewed it within the lease duration as observed on the
 * candidate's own clock (no clock sync needed); the leader renews every retry period and steps down when
 * it could not renew within the renew deadline; a clean stop releases the Lease so a successor need not
 * wait. Writes use the Lease's resourceVersion, so two candidates never both win.
 */
/**
 * Leader election as every cellfed controller runs it unless told otherwise (flags, chart values): a crashed
 * leader is replaced within about 12 s. Shorter than client-go's 15/10/2 s, since a stalled rebalance or
 * failover costs more than an extra Lease write every 2 s.
 */
export const LEADER_ELECTION_DEFAULTS = {
  leaseDurationMs: 10_000,
  renewDeadlineMs: 7_000,
  retryPeriodMs: 2_000,
} as const;

export class LeaderElector {
  private readonly options: Required<Omit<LeaderElectionOptions, 'registry' | 'client' | 'logger'>>;
  private readonly client: Pick<KubeClient, 'request'>;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly status: Gauge<'name'> | undefined;
  private observed: { spec: LeaseSpec; resourceVersion: string | undefined; at: number } | undefined;
  /** When the Lease was last read: a change seen now happened after it. */
  private lastRead: number | undefined;
  private leading = false;
  private lastLeader: string | undefined;
  private known = false;

  constructor(options: LeaderElectionOptions) {
    this.client = options.client;
    this.clock = options.clock ?? realClock;
    this.options = {
      namespace: options.namespace,
      name: options.name,
      identity: options.identity,
      clock: this.clock,
      leaseDurationMs: options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs,
      random: options.random ?? Math.random,
    };
    this.log = options.logger.child({
      component: 'leader-election',
      lease: `${options.namespace}/${options.name}`,
    });
    this.status = options.registry
      ? gauge(options.registry, 'leader_election_master_status', '1 if this process leads the named lease', [
          'name',
        ])
      : undefined;
    this.status?.set({ name: options.name }, 0);
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** True once the elector has read the Lease at least once (it knows whether it leads). */
  leaderStateKnown(): boolean {
    return this.known;
  }

  /** Campaigns until `signal` aborts; leads while it can; releases the Lease on a clean stop. */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<void> {
    while (!signal.aborted) {
      if (!(await this.acquire(signal, callbacks))) break;
      const leadership = new AbortController();
      const stop = () => leadership.abort(new Error('elector stopped'));
      signal.addEventListener('abort', stop, { once: true });
      this.setLeading(true);
      this.log.info({ identity: this.options.identity }, 'became leader');
      callbacks.onStartedLeading(leadership.signal);
      const lost = await this.renewUntilLost(signal);
      signal.removeEventListener('abort', stop);
      this.setLeading(false);
      if (lost) {
        leadership.abort(new Error('leadership lost'));
        this.log.error('leadership lost: could not renew the Lease within the renew deadline');
        callbacks.onStoppedLeading?.();
      } else {
        leadership.abort(new Error('elector stopped'));
        await this.release();
      }
    }
  }

  private async acquire(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<boolean> {
    while (!signal.aborted) {
      const acquired = await this.tryAcquireOrRenew(signal, this.clock.now() + this.options.renewDeadlineMs);
      const holder = this.observed?.spec.holderIdentity ?? '';
      if (holder && holder !== this.lastLeader) {
        this.lastLeader = holder;
        if (holder !== this.options.identity) this.log.info({ leader: holder }, 'new leader observed');
        callbacks.onNewLeader?.(holder);
      }
      if (acquired) return true;
      // Wake at the moment the holder's Lease expires if that comes before the next regular attempt, so a
      // dead leader is replaced within the lease duration rather than up to a retry period later.
      const retry = this.options.retryPeriodMs * (1 + 0.2 * this.options.random());
      const expiresIn = this.observed
        ? this.observed.at + this.options.leaseDurationMs - this.clock.now()
        : retry;
      await sleep(this.clock, Math.max(1, Math.min(retry, expiresIn + 1)), signal);
    }
    return false;
  }

  /** Renews every retry period; resolves true when leadership is lost, false when `signal` aborts. */
  private async renewUntilLost(signal: AbortSignal): Promise<boolean> {
    let lastRenew = this.clock.now();
    const pastDeadline = () => this.clock.now() - lastRenew >= this.options.renewDeadlineMs;
    while (!signal.aborted) {
      await sleep(this.clock, this.options.retryPeriodMs, signal);
      if (signal.aborted) return false;
      // A process that was stalled (CPU starvation, a blocked event loop) past its deadline may have been
      // replaced meanwhile: it steps down rather than renew, even if renewing would still succeed.
      if (pastDeadline()) return true;
      const attemptedAt = this.clock.now();
      if (await this.tryAcquireOrRenew(signal, lastRenew + this.options.renewDeadlineMs)) {
        lastRenew = attemptedAt;
      } else if (this.observed?.spec.holderIdentity !== this.options.identity) {
        return true;
      }
      if (pastDeadline()) return true;
    }
    return false;
  }

  /**
   * One attempt; its requests may take until `deadline` (as client-go bounds an attempt by the renew
   * deadline): on a loaded machine a renewal that takes a few seconds but lands in time keeps leadership,
   * where a timeout of a couple of retry periods would give it up.
   */
  private async tryAcquireOrRenew(signal: AbortSignal, deadline: number): Promise<boolean> {
    const { identity, leaseDurationMs } = this.options;
    const now = this.clock.now();
    const timeoutMs = () => Math.max(1, deadline - this.clock.now());
    const mine: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    let current: Lease;
    try {
      current = await this.client.request<Lease>('GET', this.path(), { signal, timeoutMs: timeoutMs() });
    } catch (error) {
      if (!isNotFound(error)) return this.failed('reading the Lease failed', error);
      try {
        const created = await this.client.request<Lease>('POST', this.path(false), {
          body: this.lease(mine),
          signal,
          timeoutMs: timeoutMs(),
        });
        this.observe(created);
        return true;
      } catch (createError) {
        return this.failed('creating the Lease failed', createError);
      }
    }
    this.observe(current);
    const held = current.spec.holderIdentity ?? '';
    const expired = this.observed!.at + leaseDurationMs <= now;
    if (held && held !== identity && !expired) return false;
    const spec: LeaseSpec =
      held === identity
        ? { ...current.spec, renewTime: microTime(now), leaseDurationSeconds: mine.leaseDurationSeconds }
        : { ...mine, leaseTransitions: (current.spec.leaseTransitions ?? 0) + 1 };
    try {
      const updated = await this.client.request<Lease>('PUT', this.path(), {
        body: { ...this.lease(spec), metadata: { ...current.metadata } },
        signal,
        timeoutMs: timeoutMs(),
      });
      this.observe(updated);
      return true;
    } catch (error) {
      // A conflict means someone else wrote first: they hold it, we try again next period.
      if (isConflict(error)) return false;
      return this.failed('updating the Lease failed', error);
    }
  }

  /**
   * Remembers the Lease and when, on our clock, it last changed; expiry is judged from that moment. A change
   * seen now happened after the previous read, so that read's time is used (the earliest the change can have
   * happened) when it is at most leaseDuration − renewDeadline ago: expiry then still falls after the
   * holder's renew deadline. After a longer gap (this process was stalled) the change may be a moment old,
   * so `now` is used, as client-go does; otherwise a stalled process would wrongly find a fresh holder's
   * Lease expired and take it back from a live leader.
   */
  private observe(lease: Lease): void {
    this.known = true;
    const now = this.clock.now();
    const changed =
      !this.observed ||
      this.observed.spec.holderIdentity !== lease.spec.holderIdentity ||
      this.observed.spec.renewTime !== lease.spec.renewTime;
    const readGapBound = this.options.leaseDurationMs - this.options.renewDeadlineMs;
    const changedAt =
      this.lastRead !== undefined && now - this.lastRead <= readGapBound ? this.lastRead : now;
    this.observed = {
      spec: lease.spec,
      resourceVersion: lease.metadata.resourceVersion,
      at: changed ? changedAt : this.observed!.at,
    };
    this.lastRead = now;
  }

  private async release(): Promise<void> {
    if (this.observed?.spec.holderIdentity !== this.options.identity) return;
    try {
      const current = await this.client.request<Lease>('GET', this.path(), { timeoutMs: 2000 });
      if (current.spec.holderIdentity !== this.options.identity) return;
      const now = microTime(this.clock.now());
      await this.client.request('PUT', this.path(), {
        body: {
          ...this.lease({
            holderIdentity: null,
            leaseDurationSeconds: 1,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: current.spec.leaseTransitions ?? 0,
          }),
          metadata: current.metadata,
        },
        timeoutMs: 2000,
      });
      this.log.info('released the Lease');
    } catch (error) {
      this.log.warn(
        { err: errorMessage(error) },
        'could not release the Lease; a successor waits for it to expire',
      );
    }
  }

  private failed(what: string, error: unknown): false {
    this.log.warn({ err: errorMessage(error) }, what);
    return false;
  }

  private lease(spec: LeaseSpec): Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.options.name, namespace: this.options.namespace },
      spec,
    };
  }

  private path(withName = true): string {
    const base = `/apis/coordination.k8s.io/v1/namespaces/${this.options.namespace}/leases`;
    return withName ? `${base}/${this.options.name}` : base;
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.status?.set({ name: this.options.name }, leading ? 1 : 0);
  }
}
