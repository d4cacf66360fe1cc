import { ApiError } from '@cellfed/controller-kit';
import { FakeClock, FakeListWatch, memoryLogger } from '@cellfed/controller-kit/testing';

import { feedHistory } from './history-feed.ts';
import { ResourceHistory } from './resource-history.ts';

async function until(what: string, check: () => boolean) {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!check()) throw new Error(`never: ${what}`);
}

function feed(listWatch: FakeListWatch, clock = new FakeClock()) {
  const history = new ResourceHistory();
  const stop = new AbortController();
  const { logger, lines } = memoryLogger();
  const first: boolean[] = [];
  const done = feedHistory({
    history,
    source: 'cell-1',
    listWatch,
    signal: stop.signal,
    logger,
    clock,
    onFirstAttempt: (ok) => first.push(ok),
  });
  return { history, stop, done, first, lines, clock };
}

/** A feed watching its source, which has made one change since (recorded). */
async function feedWithOneChange() {
  const source = new FakeListWatch();
  const f = feed(source);
  await until('watching', () => source.openWatches === 1);
  source.put('ns', 'a');
  await until('one change', () => f.history.endSeq() === 1);
  return { source, f };
}

describe('feedHistory', () => {
  it('begins where its source is, reading no object, then records each change in order', async () => {
    const source = new FakeListWatch();
    for (const name of ['a', 'b', 'c']) source.put('ns', name, { metadata: { labels: { app: 'web' } } });
    const f = feed(source);
    await until('begun', () => f.history.latest('cell-1') !== undefined);
    expect(f.first).toEqual([true]);
    // One page of one item: the source's version (a source of millions costs what this one does).
    expect(source.listCalls).toEqual([{}]);
    const begun = f.history.latest('cell-1')!;
    await until('watching', () => source.openWatches === 1);
    source.put('ns', 'a', { metadata: { labels: { app: 'db' } } });
    source.remove('ns', 'a');
    await until('two changes', () => f.history.endSeq() === 2);
    expect([0, 1].map((seq) => f.history.entry(seq))).toMatchObject([
      // Its labels before: not known (nothing is kept per object), until read from the cell.
      { type: 'MODIFIED', name: 'a', labels: { app: 'db' }, previousLabels: undefined, version: begun + 1 },
      // …but known from the change before it, which the history holds.
      { type: 'DELETED', name: 'a', previousLabels: { app: 'db' } },
    ]);
    f.stop.abort();
    await f.done;
  });

  it('opens its watch again from where it was when it ends cleanly: no gap', async () => {
    const { source, f } = await feedWithOneChange();
    source.endWatches();
    await until('watching again', () => source.watchCalls.length === 2);
    expect(source.watchCalls[1]!.resourceVersion).toBe(String(f.history.entry(0)!.version));
    expect(source.listCalls).toHaveLength(1);
    f.stop.abort();
    await f.done;
  });

  it('resumes from where it was when its connection breaks: the history keeps following the source', async () => {
    const { source, f } = await feedWithOneChange();
    source.breakWatches();
    expect(f.history.latest('cell-1')).toBeDefined();
    await f.clock.advance(500);
    await until('watching again', () => source.watchCalls.length === 2);
    expect(source.watchCalls[1]!.resourceVersion).toBe(String(f.history.entry(0)!.version));
    expect(source.listCalls).toHaveLength(1);
    f.stop.abort();
    await f.done;
  });

  it('stops answering for the source when its watch expires, and begins again from a new list', async () => {
    const { source, f } = await feedWithOneChange();
    const version = f.history.entry(0)!.version;
    source.sendStatus({ code: 410, reason: 'Expired', message: 'too old resource version' });
    await until('stopped', () => f.history.latest('cell-1') === undefined);
    source.putQuietly('ns', 'b'); // unseen: the history cannot place what came before it
    await f.clock.advance(500);
    await until('begun again', () => f.history.latest('cell-1') !== undefined);
    expect(f.history.place('cell-1', version)).toEqual({ kind: 'expired' });
    expect(source.listCalls).toHaveLength(2);
    f.stop.abort();
    await f.done;
  });

  it('gives up on a source that refuses the router: its changes are not ordered', async () => {
    const source = new FakeListWatch();
    source.listFailures.push(new ApiError(403, { code: 403, reason: 'Forbidden' }, 'list'));
    const f = feed(source);
    await f.done;
    expect(f.first).toEqual([false]);
    expect(f.history.latest('cell-1')).toBeUndefined();
    expect(f.lines.some((line) => String(line['msg']).includes('history not kept'))).toBe(true);
  });
});
