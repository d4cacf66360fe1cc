import { ApiError } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { FakeClock, flushPromises } from '../testing/fake-clock.ts';
import { memoryLogger } from '../testing/memory-logger.ts';
import { LeaderElector, LEADER_ELECTION_DEFAULTS } from './leader-elector.ts';
import { microTime } from './micro-time.ts';

/** One Lease in memory with the apiserver's optimistic concurrency. */
class FakeLeaseApi {
  lease: { metadata: Record<string, unknown>; spec: Record<string, unknown> } | undefined;
  private version = 0;

  /**
   * A client for one candidate; `down()` makes its requests fail, as a partition would; `stall()` holds
   * them until the returned resume is called, as a process whose event loop is blocked would.
   */
  client() {
    let reachable = true;
    let stalled: Promise<void> | undefined;
    const requests: { method: string; timeoutMs: number | undefined }[] = [];
    const request = async (
      method: string,
      _path: string,
      options: { body?: unknown; timeoutMs?: number } = {},
    ) => {
      requests.push({ method, timeoutMs: options.timeoutMs });
      await Promise.resolve();
      await stalled;
      if (!reachable) throw new Error('connect ETIMEDOUT');
      const body = options.body as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
      if (method === 'GET') {
        if (!this.lease) throw new ApiError(404, { reason: 'NotFound' }, 'get');
        return structuredClone(this.lease);
      }
      if (method === 'POST') {
        if (this.lease) throw new ApiError(409, { reason: 'AlreadyExists' }, 'create');
        this.lease = {
          metadata: { ...body.metadata, resourceVersion: String(++this.version) },
          spec: body.spec,
        };
        return structuredClone(this.lease);
      }
      if (!this.lease || body.metadata.resourceVersion !== this.lease.metadata.resourceVersion) {
        throw new ApiError(409, { reason: 'Conflict' }, 'update');
      }
      this.lease = {
        metadata: { ...body.metadata, resourceVersion: String(++this.version) },
        spec: body.spec,
      };
      return structuredClone(this.lease);
    };
    const stall = () => {
      let resume!: () => void;
      stalled = new Promise((resolve) => (resume = resolve));
      return () => {
        stalled = undefined;
        resume();
      };
    };
    return {
      client: { request } as unknown as Pick<KubeClient, 'request'>,
      down: () => (reachable = false),
      stall,
      requests,
    };
  }
}

function candidate(api: FakeLeaseApi, clock: FakeClock, identity: string) {
  const { logger } = memoryLogger();
  const { client, down, stall, requests } = api.client();
  const elector = new LeaderElector({
    client,
    namespace: 'cellfed-system',
    name: 'test',
    identity,
    logger,
    clock,
    random: () => 0,
  });
  const stop = new AbortController();
  const state = {
    leadingSince: undefined as number | undefined,
    signal: undefined as AbortSignal | undefined,
    stopped: 0,
  };
  const running = elector.run(stop.signal, {
    onStartedLeading: (signal) => {
      state.leadingSince = clock.now();
      state.signal = signal;
    },
    onStoppedLeading: () => state.stopped++,
  });
  return { elector, state, stop: () => stop.abort(), running, down, stall, requests };
}

/** Two candidates on one Lease, `a` first so it leads; `stopBoth` ends both runs. */
async function twoCandidates() {
  const clock = new FakeClock();
  const api = new FakeLeaseApi();
  const a = candidate(api, clock, 'a');
  await flushPromises();
  const b = candidate(api, clock, 'b');
  const stopBoth = async () => {
    a.stop();
    b.stop();
    await Promise.all([a.running, b.running]);
  };
  return { clock, api, a, b, stopBoth };
}

describe('LeaderElector', () => {
  it('lets exactly one of two candidates lead while the leader renews', async () => {
    const { clock, api, a, b, stopBoth } = await twoCandidates();
    await clock.advance(60_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    expect(b.elector.leaderStateKnown()).toBe(true);
    expect(api.lease?.spec.holderIdentity).toBe('a');
    await stopBoth();
  });

  it('hands over within the lease duration when the leader dies without releasing', async () => {
    const { clock, api, a, b, stopBoth } = await twoCandidates();
    await clock.advance(10_000);
    a.down();
    const died = clock.now();
    await clock.advance(20_000);
    expect(b.elector.isLeader()).toBe(true);
    const handover = b.state.leadingSince! - died;
    // Not before the old leader's renew deadline, not later than the lease duration (the defaults: 7 s, 10 s).
    expect(handover).toBeGreaterThan(LEADER_ELECTION_DEFAULTS.renewDeadlineMs);
    expect(handover).toBeLessThanOrEqual(LEADER_ELECTION_DEFAULTS.leaseDurationMs);
    expect(api.lease?.spec.leaseTransitions).toBe(1);
    await stopBoth();
  });

  it('steps down and aborts the leadership signal when it cannot renew within the renew deadline', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const a = candidate(api, clock, 'a');
    await clock.advance(1000);
    expect(a.elector.isLeader()).toBe(true);
    a.down();
    const cut = clock.now();
    // The deadline runs from the last successful renewal (at 0 s), so it steps down at 7 s.
    await clock.advance(5000);
    expect(a.state.signal!.aborted).toBe(false);
    await clock.advance(2000);
    expect(a.state.signal!.aborted).toBe(true);
    expect(a.state.stopped).toBe(1);
    expect(clock.now() - cut).toBeLessThanOrEqual(LEADER_ELECTION_DEFAULTS.renewDeadlineMs);
    expect(a.elector.isLeader()).toBe(false);
    a.stop();
    await a.running;
  });

  it('gives each renewal request the time left to the renew deadline (as client-go), not a fixed timeout', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const a = candidate(api, clock, 'a');
    await flushPromises();
    expect(a.elector.isLeader()).toBe(true);
    a.requests.length = 0;
    // Renewed at 0 s; the first renewal, at 2 s, may take the 5 s left to the 7 s deadline: a loaded
    // machine's slow answer that lands in time keeps leadership.
    await clock.advance(2000);
    expect(a.requests).toEqual([
      { method: 'GET', timeoutMs: 5000 },
      { method: 'PUT', timeoutMs: 5000 },
    ]);
    a.stop();
    await a.running;
  });

  it('a leader stalled until its successor leads steps down on waking and leaves the Lease to it', async () => {
    const { clock, api, a, b, stopBoth } = await twoCandidates();
    await clock.advance(5000);
    expect(a.elector.isLeader()).toBe(true);
    const resume = a.stall();
    await clock.advance(30_000);
    expect(b.elector.isLeader()).toBe(true);
    resume();
    await clock.advance(4000);
    // Its read, answered only now, shows b's fresh Lease: not expired, whatever a last read long ago.
    expect(a.state.stopped).toBe(1);
    expect(a.state.signal!.aborted).toBe(true);
    expect(a.elector.isLeader()).toBe(false);
    expect(b.elector.isLeader()).toBe(true);
    expect(api.lease?.spec.holderIdentity).toBe('b');
    await stopBoth();
  });

  it('steps down when a renewal lands after its renew deadline, even though nobody took over', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const a = candidate(api, clock, 'a');
    await clock.advance(3000);
    const leadership = a.state.signal!;
    const resume = a.stall();
    await clock.advance(12_000);
    resume();
    await clock.advance(100);
    expect(a.state.stopped).toBe(1);
    expect(leadership.aborted).toBe(true);
    a.stop();
    await a.running;
  });

  it('releases the Lease on a clean stop so the next candidate takes over within a retry period', async () => {
    const { clock, api, a, b, stopBoth } = await twoCandidates();
    await clock.advance(5000);
    a.stop();
    await a.running;
    expect(a.state.signal!.aborted).toBe(true);
    expect(api.lease?.spec.holderIdentity).toBeNull();
    const released = clock.now();
    await clock.advance(3000);
    expect(b.elector.isLeader()).toBe(true);
    expect(b.state.leadingSince! - released).toBeLessThanOrEqual(2400);
    await stopBoth();
  });

  it('writes MicroTime with six fractional digits', () => {
    expect(microTime(Date.UTC(2026, 10, 23, 1, 2, 3, 456))).toBe('2026-11-23T01:02:03.456000Z');
  });
});
