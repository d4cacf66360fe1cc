import { Registry } from 'prom-client';

import type { KubeClient } from '../kube/kube-client.ts';
import { FakeClock, flushPromises } from '../testing/fake-clock.ts';
import { memoryLogger } from '../testing/memory-logger.ts';
import { Manager } from './manager.ts';
import { parseManagerConfig } from './manager-config.ts';

const noApiserver = {
  request: () => Promise.reject(new Error('no apiserver in this test')),
} as unknown as Pick<KubeClient, 'request'>;

function setup(gracefulShutdownMs: number) {
  const clock = new FakeClock();
  const { logger, lines } = memoryLogger();
  const manager = new Manager({
    name: 'test',
    config: parseManagerConfig({
      httpHost: '127.0.0.1',
      httpPort: 0,
      gracefulShutdownMs,
      leaderElection: { enabled: false },
    }),
    logger,
    registry: new Registry(),
    controlPlane: noApiserver,
    clock,
  });
  return { clock, manager, lines };
}

describe('Manager', () => {
  it('runs every runnable, stops them on stop() and lets in-hand work finish', async () => {
    const { manager } = setup(30_000);
    const seen: string[] = [];
    manager.add(
      async (signal) => {
        seen.push('always started');
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        await new Promise((resolve) => setTimeout(resolve, 20));
        seen.push('always drained');
      },
      { needLeaderElection: false },
    );
    manager.add(
      async (signal) => {
        seen.push('leader work started');
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
      },
      { needLeaderElection: true },
    );
    const done = manager.start();
    await flushPromises();
    expect(seen).toEqual(['always started', 'leader work started']);
    manager.stop();
    expect(await done).toEqual({ leadershipLost: false });
    expect(seen).toContain('always drained');
  });

  it('gives up on work that outlives the shutdown bound', async () => {
    const { manager, clock, lines } = setup(5000);
    manager.add(() => new Promise<void>(() => undefined), { needLeaderElection: false });
    let finished = false;
    const done = manager.start().then(() => (finished = true));
    await flushPromises();
    manager.stop();
    await clock.advance(4999);
    expect(finished).toBe(false);
    await clock.advance(1);
    await done;
    expect(lines.some((line) => line.msg === 'shutdown bound reached; exiting with work unfinished')).toBe(
      true,
    );
  });

  it('stops the process when a runnable fails', async () => {
    const { manager, lines } = setup(1000);
    manager.add(() => Promise.reject(new Error('cache broke')), { needLeaderElection: false });
    await manager.start();
    expect(lines.find((line) => line.msg === 'a runnable failed; stopping')).toMatchObject({
      err: 'cache broke',
    });
  });

  it('serves /readyz and /healthz while running', async () => {
    const { manager } = setup(1000);
    let port = 0;
    manager.add(
      async (signal) => {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
      },
      { needLeaderElection: false },
    );
    const original = manager.server.listen.bind(manager.server);
    manager.server.listen = async (host, requested) => {
      const address = await original(host, requested);
      port = address.port;
      return address;
    };
    const done = manager.start();
    while (port === 0) await flushPromises();
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    manager.stop();
    await done;
  });
});
