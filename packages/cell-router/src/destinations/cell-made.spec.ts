import { parseRequestInfo, type ResourceRequestInfo } from '../request/request-info.ts';
import { cellMadeTarget, findCellMade, type SourceReader } from './cell-made.ts';

/** A source answering a GET of one path: 200 with the object, or a status code, or a transport error. */
function source(answer: { created: string } | number | Error, asked: string[] = []): SourceReader {
  return {
    raw: async (_method, target) => {
      asked.push(target);
      if (answer instanceof Error) throw answer;
      if (typeof answer === 'number') return { statusCode: answer, body: { text: async () => '{}' } };
      const object = { metadata: { name: 'web-5d8f', creationTimestamp: answer.created } };
      return { statusCode: 200, body: { text: async () => JSON.stringify(object) } };
    },
  };
}

const info = (method: string, path: string) => parseRequestInfo(method, path) as ResourceRequestInfo;
const GET_LOG = info('GET', '/api/v1/namespaces/shop/pods/web-5d8f-x2x9z/log');

describe('findCellMade', () => {
  it('finds the source holding the object, asking each for the object itself (not the subresource)', async () => {
    const asked: string[] = [];
    const sources = { a: source(404, asked), b: source({ created: '2026-11-25T10:00:00Z' }, asked) };
    const found = await findCellMade(GET_LOG, ['a', 'b'], (id) => sources[id as 'a' | 'b'], {});
    expect(found).toEqual({ kind: 'found', source: 'b' });
    expect(asked).toEqual([
      '/api/v1/namespaces/shop/pods/web-5d8f-x2x9z',
      '/api/v1/namespaces/shop/pods/web-5d8f-x2x9z',
    ]);
  });

  it('counts a copy the filter refuses as not there', async () => {
    const sources = { a: source({ created: '2026-11-25T10:00:00Z' }) };
    const found = await findCellMade(
      GET_LOG,
      ['a'],
      () => sources.a,
      {},
      undefined,
      () => false,
    );
    expect(found).toEqual({ kind: 'nowhere' });
  });

  it('takes the newest copy when two sources hold one name', async () => {
    const sources = {
      a: source({ created: '2026-11-25T10:00:00Z' }),
      c: source({ created: '2026-11-25T10:05:00Z' }),
    };
    expect(await findCellMade(GET_LOG, ['a', 'c'], (id) => sources[id as 'a' | 'c'], {})).toEqual({
      kind: 'found',
      source: 'c',
    });
  });

  it('says nowhere only when every source answered without it, and who did not answer otherwise', async () => {
    const none = { a: source(404), b: source(403) };
    expect(await findCellMade(GET_LOG, ['a', 'b'], (id) => none[id as 'a' | 'b'], {})).toEqual({
      kind: 'nowhere',
    });
    const down = { a: source(404), b: source(new Error('connect ECONNREFUSED')) };
    expect(await findCellMade(GET_LOG, ['a', 'b', 'c'], (id) => down[id as 'a' | 'b'], {})).toEqual({
      kind: 'unknown',
      unanswered: ['b', 'c'],
      reason: 'b: connect ECONNREFUSED; c: not connected',
    });
  });
});

describe('cellMadeTarget', () => {
  it('creates in the ring’s cell without looking, but evicts a Pod where it is', async () => {
    const asked: string[] = [];
    const sources = { a: source({ created: '2026-11-25T10:00:00Z' }, asked) };
    const reader = (id: string) => sources[id as 'a'];
    expect(
      await cellMadeTarget(info('POST', '/api/v1/namespaces/shop/pods'), 'b', ['a'], reader, {}),
    ).toEqual({ kind: 'source', source: 'b', route: 'cell-made-ring' });
    expect(asked).toEqual([]);
    expect(
      await cellMadeTarget(
        info('POST', '/api/v1/namespaces/shop/pods/web-5d8f-x2x9z/eviction'),
        'b',
        ['a'],
        reader,
        {},
      ),
    ).toEqual({ kind: 'source', source: 'a', route: 'cell-made' });
  });

  it('sends a request for an object nowhere to the ring’s cell, which answers 404 as one apiserver would', async () => {
    const sources = { a: source(404) };
    expect(await cellMadeTarget(GET_LOG, 'a', ['a'], (id) => sources[id as 'a'], {})).toEqual({
      kind: 'source',
      source: 'a',
      route: 'cell-made-ring',
    });
  });
});
