import type { KubeClient } from '../kube/kube-client.ts';
import { FakeClock, flushPromises } from '../testing/fake-clock.ts';
import { memoryLogger } from '../testing/memory-logger.ts';
import type { CellHealth } from './health-hysteresis.ts';
import { probeCell } from './health-probe.ts';

type Answer = 'ok' | 'fail' | 'hang';

function setup(answers: () => Answer) {
  const clock = new FakeClock();
  const changes: [number, CellHealth][] = [];
  const paths: string[] = [];
  const client = {
    request: (_method: string, path: string, options: { signal: AbortSignal }) => {
      paths.push(path);
      const answer = answers();
      if (answer === 'ok') return Promise.resolve('ok');
      if (answer === 'fail') return Promise.reject(new Error('connect ECONNREFUSED'));
      return new Promise((_resolve, reject) =>
        options.signal.addEventListener('abort', () => reject(options.signal.reason)),
      );
    },
  } as unknown as Pick<KubeClient, 'request'>;
  const stop = new AbortController();
  const running = probeCell(client, {
    clock,
    log: memoryLogger().logger,
    signal: stop.signal,
    periodMs: 1000,
    timeoutMs: 500,
    failureThreshold: 3,
    successThreshold: 2,
    onChange: (health) => changes.push([clock.now(), health]),
  });
  return { clock, changes, paths, stop: async () => (stop.abort(), await running) };
}

describe('probeCell', () => {
  it('asks /readyz and reports Healthy at the first good answer', async () => {
    const { changes, paths, stop } = setup(() => 'ok');
    await flushPromises();
    expect(paths).toEqual(['/readyz']);
    expect(changes.map(([, health]) => health)).toEqual(['Healthy']);
    await stop();
  });

  it('reports Unhealthy after three failures and Healthy after two successes', async () => {
    let answer: Answer = 'ok';
    const { clock, changes, stop } = setup(() => answer);
    await flushPromises();
    answer = 'fail';
    await clock.advance(3000);
    expect(changes.map(([, health]) => health)).toEqual(['Healthy', 'Unhealthy']);
    answer = 'ok';
    await clock.advance(1000);
    expect(changes).toHaveLength(2);
    await clock.advance(1000);
    expect(changes.map(([, health]) => health)).toEqual(['Healthy', 'Unhealthy', 'Healthy']);
    await stop();
  });

  it('counts an answer that does not come within the timeout as a failure', async () => {
    const { clock, changes, stop } = setup(() => 'hang');
    await clock.advance(500);
    expect(changes).toEqual([]);
    // Three probes, each given up after 500 ms, one period apart.
    await clock.advance(3000);
    expect(changes.map(([, health]) => health)).toEqual(['Unhealthy']);
    await stop();
  });

  it('tells when the cell answers with other storage after a failure, and not before', async () => {
    let answer: 'ok' | 'fail' = 'ok';
    let uid = 'first';
    const clock = new FakeClock();
    const paths: string[] = [];
    let replaced = 0;
    const client = {
      request: (_method: string, path: string) => {
        paths.push(path);
        if (answer === 'fail') return Promise.reject(new Error('connect ECONNREFUSED'));
        return Promise.resolve(path === '/readyz' ? 'ok' : { metadata: { uid } });
      },
    } as unknown as Pick<KubeClient, 'request'>;
    const stop = new AbortController();
    const running = probeCell(client, {
      clock,
      log: memoryLogger().logger,
      signal: stop.signal,
      periodMs: 1000,
      onChange: () => undefined,
      onReplaced: () => replaced++,
    });
    await flushPromises();
    await clock.advance(2000);
    // The identity is read once, then only /readyz while all is well.
    expect(paths.filter((path) => path !== '/readyz')).toEqual(['/api/v1/namespaces/kube-system']);
    answer = 'fail';
    await clock.advance(1000);
    uid = 'second';
    answer = 'ok';
    await clock.advance(1000);
    expect(replaced).toBe(1);
    await clock.advance(3000);
    expect(replaced).toBe(1);
    stop.abort();
    await running;
  });
});
