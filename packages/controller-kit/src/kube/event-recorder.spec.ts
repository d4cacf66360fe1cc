import { FakeClock } from '../testing/fake-clock.ts';
import { memoryLogger } from '../testing/memory-logger.ts';
import { EventRecorder } from './event-recorder.ts';
import type { KubeClient } from './kube-client.ts';

function setup(fail = false) {
  const clock = new FakeClock(Date.UTC(2026, 10, 23, 6, 0, 0, 123));
  const posts: { path: string; body: Record<string, unknown> }[] = [];
  const client = {
    request: async (_method: string, path: string, options: { body: Record<string, unknown> }) => {
      if (fail) throw new Error('forbidden');
      posts.push({ path, body: options.body });
    },
  } as unknown as Pick<KubeClient, 'request'>;
  const { logger, lines } = memoryLogger();
  const recorder = new EventRecorder({
    client,
    controller: 'cellfed.io/test',
    instance: 'pod-1',
    logger,
    clock,
  });
  return { clock, posts, recorder, lines };
}

const cellSet = { apiVersion: 'cells.cellfed.io/v1alpha1', kind: 'CellSet', name: 'default', uid: 'u-1' };

describe('EventRecorder', () => {
  it('writes an events.k8s.io/v1 Event about the object, cluster-scoped ones in default', async () => {
    const { posts, recorder } = setup();
    await recorder.record(
      cellSet,
      'Warning',
      'CellSecretMissing',
      'cell c: Secret cellfed-system/c does not exist',
    );
    expect(posts).toEqual([
      {
        path: '/apis/events.k8s.io/v1/namespaces/default/events',
        body: expect.objectContaining({
          metadata: { name: expect.stringMatching(/^default\.[0-9a-f]+$/), namespace: 'default' },
          eventTime: '2026-11-23T06:00:00.123000Z',
          reportingController: 'cellfed.io/test',
          reportingInstance: 'pod-1',
          reason: 'CellSecretMissing',
          type: 'Warning',
          note: 'cell c: Secret cellfed-system/c does not exist',
          regarding: {
            apiVersion: 'cells.cellfed.io/v1alpha1',
            kind: 'CellSet',
            name: 'default',
            uid: 'u-1',
          },
        }),
      },
    ]);
  });

  it('names Events uniquely, even within one millisecond', async () => {
    const { posts, recorder } = setup();
    await recorder.record(cellSet, 'Warning', 'A', 'one');
    await recorder.record(cellSet, 'Warning', 'B', 'two');
    const names = posts.map((post) => (post.body.metadata as { name: string }).name);
    expect(new Set(names).size).toBe(2);
    expect(names[0]).toBe(
      `default.${(BigInt(Date.UTC(2026, 10, 23, 6, 0, 0, 123)) * 1_000_000n).toString(16)}`,
    );
  });

  it('does not repeat the same Event within the dedupe window', async () => {
    const { posts, recorder, clock } = setup();
    await recorder.record(cellSet, 'Warning', 'R', 'same');
    await recorder.record(cellSet, 'Warning', 'R', 'same');
    await recorder.record(cellSet, 'Warning', 'R', 'different');
    await clock.advance(300_000);
    await recorder.record(cellSet, 'Warning', 'R', 'same');
    expect(posts.map((post) => post.body.note)).toEqual(['same', 'different', 'same']);
  });

  it('logs instead of throwing when the apiserver refuses', async () => {
    const { recorder, lines } = setup(true);
    await expect(recorder.record(cellSet, 'Normal', 'R', 'n')).resolves.toBeUndefined();
    expect(lines.find((line) => line.msg === 'could not record an Event')).toMatchObject({
      err: 'forbidden',
    });
  });
});
