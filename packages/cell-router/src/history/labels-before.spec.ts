import { ApiError } from '@cellfed/controller-kit';
import { FakeClock, memoryLogger } from '@cellfed/controller-kit/testing';

import { labelsBeforeReader } from './labels-before.ts';

const resource = { group: 'apps', version: 'v1', resource: 'deployments' };

/** A cell whose answers are given in turn; every request is recorded. */
function cell(...answers: (object | Error)[]) {
  const asked: { path: string; query: Record<string, unknown> | undefined; accept: string | undefined }[] =
    [];
  const client = {
    request: async <T>(
      _method: string,
      path: string,
      options: { query?: Record<string, unknown>; accept?: string } = {},
    ): Promise<T> => {
      asked.push({ path, query: options.query, accept: options.accept });
      const answer = answers.shift()!;
      if (answer instanceof Error) throw answer;
      return answer as T;
    },
  };
  return { client, asked };
}

const gone = () => new ApiError(410, { reason: 'Expired', message: 'too old resource version' }, 'list');
const unavailable = () => new ApiError(503, { reason: 'ServiceUnavailable' }, 'list');

describe('labelsBeforeReader', () => {
  it('reads the one object at the version before the change, exactly, as metadata; null when it did not exist', async () => {
    const { client, asked } = cell(
      { items: [{ metadata: { name: 'web,a=b', labels: { app: 'web' } } }] },
      { items: null },
    );
    const { logger } = memoryLogger();
    const read = labelsBeforeReader({ resource, client: () => client, logger });
    const change = { namespace: 'shop', name: 'web,a=b', version: 42 };
    expect(await read('cell-1', change)).toEqual({ app: 'web' });
    expect(await read('cell-1', change)).toBeNull();
    expect(asked[0]).toEqual({
      path: '/apis/apps/v1/namespaces/shop/deployments',
      // The name's `,` and `=` escaped: it names one object, not two terms.
      query: {
        fieldSelector: 'metadata.name=web\\,a\\=b',
        resourceVersion: '41',
        resourceVersionMatch: 'Exact',
      },
      accept: expect.stringContaining('as=PartialObjectMetadataList'),
    });
  });

  it('tries a transient failure again, and gives up at once on a version compacted away', async () => {
    const clock = new FakeClock();
    const { logger, lines } = memoryLogger();
    const flaky = cell(unavailable(), { items: [{ metadata: { name: 'a', labels: { x: '1' } } }] });
    const read = labelsBeforeReader({ resource, client: () => flaky.client, logger, clock });
    const answer = read('cell-1', { namespace: 'ns', name: 'a', version: 7 });
    await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(200);
    expect(await answer).toEqual({ x: '1' });
    expect(flaky.asked).toHaveLength(2);

    const compacted = cell(gone());
    const never = labelsBeforeReader({ resource, client: () => compacted.client, logger, clock });
    await expect(never('cell-1', { namespace: 'ns', name: 'a', version: 7 })).rejects.toThrow(/410/);
    expect(compacted.asked).toHaveLength(1);
    expect(
      lines.some(
        (line) => line['msg'] === 'labels before a change not read: filtered watches wait for the cell',
      ),
    ).toBe(true);
  });
});
