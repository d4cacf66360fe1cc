import { FairQueue } from './fair-queue.ts';

/** A task that runs until its release is called, recording when it started. */
function tasks() {
  const started: string[] = [];
  const releases = new Map<string, () => void>();
  const task = (name: string) => () =>
    new Promise<string>((resolve) => {
      started.push(name);
      releases.set(name, () => resolve(name));
    });
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const finish = async (name: string) => {
    releases.get(name)!();
    await settle();
  };
  return { started, task, finish, settle };
}

describe('FairQueue', () => {
  it('runs up to its concurrency at once, then takes waiting tasks key by key in turn', async () => {
    const queue = new FairQueue({ concurrency: 2, maxWaitingPerKey: 10 });
    const { started, task, finish } = tasks();
    const flood = ['f1', 'f2', 'f3', 'f4', 'f5'].map((name) => queue.run('flood', task(name))!);
    const mine = queue.run('mine', task('m1'))!;
    expect(started).toEqual(['f1', 'f2']);
    await finish('f1');
    await finish('f2');
    // The flood's turn, then mine: not after the flood's every task.
    expect(started).toEqual(['f1', 'f2', 'f3', 'm1']);
    await finish('m1');
    expect(await mine).toBe('m1');
    for (const name of ['f3', 'f4', 'f5']) await finish(name);
    expect(await Promise.all(flood)).toEqual(['f1', 'f2', 'f3', 'f4', 'f5']);
    expect(queue.inFlight).toBe(0);
    expect(queue.waitingKeys).toBe(0);
  });

  it('refuses a task past its key’s queue, and only that key’s', async () => {
    const queue = new FairQueue({ concurrency: 1, maxWaitingPerKey: 1 });
    const { task, finish } = tasks();
    queue.run('a', task('a1'));
    queue.run('a', task('a2'));
    expect(queue.run('a', task('a3'))).toBeUndefined();
    expect(queue.run('b', task('b1'))).toBeDefined();
    await finish('a1');
    await finish('a2');
    await finish('b1');
  });

  it('starts the next task when one fails', async () => {
    const queue = new FairQueue({ concurrency: 1, maxWaitingPerKey: 5 });
    const failing = queue.run('a', () => Promise.reject(new Error('review failed')))!;
    const next = queue.run('b', () => Promise.resolve('ok'))!;
    await expect(failing).rejects.toThrow('review failed');
    expect(await next).toBe('ok');
  });
});
