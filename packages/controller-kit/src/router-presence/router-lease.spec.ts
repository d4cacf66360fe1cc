import { LOADED_GENERATION_ANNOTATION } from '@cellfed/api';
import type { RouterLease } from '@cellfed/federation';
import { FakeClock, flushPromises, memoryLogger } from '../testing/index.ts';
import type { RequestOptions } from '../kube/kube-client.ts';
import { RouterLeasePublisher } from './router-lease.ts';

function fakeClient() {
  const calls: { method: string; path: string; options?: RequestOptions }[] = [];
  let failures = 0;
  return {
    calls,
    failNext: (n: number) => (failures = n),
    client: {
      request: async <T>(method: string, path: string, options?: RequestOptions): Promise<T> => {
        calls.push({ method, path, ...(options ? { options } : {}) });
        if (failures > 0) {
          failures -= 1;
          throw new Error('apiserver unavailable');
        }
        return undefined as T;
      },
    },
  };
}

describe('RouterLeasePublisher', () => {
  it('publishes the loaded generation at once, renews it, and deletes the Lease on stop', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 23));
    const { client, calls } = fakeClient();
    const publisher = new RouterLeasePublisher({
      client,
      namespace: 'cellfed-system',
      cellSetName: 'default',
      identity: 'Router_A.1',
      logger: memoryLogger().logger,
      clock,
    });
    const stop = new AbortController();
    const running = publisher.run(stop.signal);
    await publisher.publish(3);
    expect(calls).toHaveLength(1);
    const body = JSON.parse(calls[0]!.options!.body as string) as RouterLease;
    expect(calls[0]!.path).toBe(
      '/apis/coordination.k8s.io/v1/namespaces/cellfed-system/leases/cell-router-router-a-1',
    );
    expect(calls[0]!.options!.contentType).toBe('application/apply-patch+yaml');
    expect(body.metadata.annotations).toEqual({ [LOADED_GENERATION_ANNOTATION]: '3' });
    expect(body.spec?.renewTime).toBe('2026-11-23T00:00:00.000000Z');

    await clock.advance(10_000);
    expect(calls).toHaveLength(2);
    expect((JSON.parse(calls[1]!.options!.body as string) as RouterLease).spec?.renewTime).toBe(
      '2026-11-23T00:00:10.000000Z',
    );
    stop.abort();
    await running;
    expect(calls.at(-1)).toMatchObject({ method: 'DELETE' });
  });

  it('keeps going when a write fails, and writes again at the next renewal', async () => {
    const clock = new FakeClock();
    const { client, calls, failNext } = fakeClient();
    const { logger, lines } = memoryLogger();
    const publisher = new RouterLeasePublisher({
      client,
      namespace: 'ns',
      cellSetName: 'default',
      identity: 'r',
      logger,
      clock,
      renewIntervalMs: 5_000,
    });
    const stop = new AbortController();
    const running = publisher.run(stop.signal);
    failNext(1);
    await publisher.publish(1);
    expect(lines.some((line) => line.msg === 'router Lease not written; retrying at the next renewal')).toBe(
      true,
    );
    await clock.advance(5_000);
    await flushPromises();
    expect(calls.filter((call) => call.method === 'PATCH')).toHaveLength(2);
    stop.abort();
    await running;
  });
});
