import fc from 'fast-check';
import pino from 'pino';
import { FakeClock } from '@cellfed/controller-kit/testing';

import { ResourceHistory } from '../history/resource-history.ts';
import { watchScope } from '../history/watch-scope.ts';
import { EventOrder } from './event-order.ts';

const logger = pino({ level: 'silent' });
type Change = { cell: string; version: number; name: string; labels?: Record<string, string> };

interface SetupOptions {
  query?: string;
  start?: Map<string, number | undefined>;
  stallMs?: number;
  /** The cells' storage refuses the reads of labels before a change. */
  unreadable?: boolean;
}

function setup(options: SetupOptions = {}) {
  const clock = new FakeClock();
  const recorded: Change[] = [];
  const reads: string[] = [];
  // The cells' storage: every object there before the history began, with no labels.
  const history = new ResourceHistory({
    clock,
    labelsBefore: async (source, change) => {
      reads.push(`${source}@${change.version}`);
      if (options.unreadable) throw new Error('compacted');
      const before = recorded.filter(
        (c) => c.cell === source && c.name === change.name && c.version < change.version,
      );
      return before.at(-1)?.labels ?? {};
    },
  });
  history.begin('cell-1', 10);
  history.begin('cell-2', 20);
  const released: string[] = [];
  const order = new EventOrder<string>({
    history,
    relevance: watchScope('ns', new URLSearchParams(options.query ?? '')),
    start:
      options.start ??
      new Map([
        ['cell-1', 10],
        ['cell-2', 20],
      ]),
    release: (item) => released.push(item),
    clock,
    logger,
    ...(options.stallMs ? { stallMs: options.stallMs } : {}),
  });
  const record = (change: Change) => {
    recorded.push(change);
    history.record(change.cell, {
      type: 'MODIFIED',
      version: change.version,
      namespace: 'ns',
      name: change.name,
      ...(change.labels ? { labels: change.labels } : {}),
    });
  };
  const send = (change: Change) =>
    order.change(change.cell, change.version, `${change.cell}@${change.version}`);
  return { clock, history, order, released, record, send, reads };
}

/** Lets the history's reads of labels before a change answer. */
const reads = () => new Promise((resolve) => setImmediate(resolve));

const a1 = { cell: 'cell-1', version: 11, name: 'a' };
const b1 = { cell: 'cell-2', version: 21, name: 'b' };
const a2 = { cell: 'cell-1', version: 12, name: 'a' };

/** Changes in the history's order, each at its cell's next version (the cells begin at 10 and 20). */
function numbered(changes: Omit<Change, 'version'>[]): Change[] {
  const versions = new Map([
    ['cell-1', 10],
    ['cell-2', 20],
  ]);
  return changes.map((change) => {
    const version = versions.get(change.cell)! + 1;
    versions.set(change.cell, version);
    return { ...change, version };
  });
}

/**
 * Plays `history` (every cell's changes in the history's order) into a fresh order for one watcher whose
 * cells deliver `delivered` (each cell's in its order), interleaving history records and deliveries as the
 * seeds say: what the watcher is released.
 */
async function playWatcher(
  history: Change[],
  delivered: Change[],
  seeds: number[],
  watcher: number,
  query?: string,
): Promise<string[]> {
  const { released, record, send } = setup(query === undefined ? {} : { query });
  let recorded = 0;
  const pending = new Map(
    ['cell-1', 'cell-2'].map((cell) => [cell, delivered.filter((c) => c.cell === cell)]),
  );
  const left = () => recorded < history.length || [...pending.values()].some((list) => list.length > 0);
  for (let step = 0; left(); step++) {
    const seed = seeds[(step * 2 + watcher) % Math.max(seeds.length, 1)] ?? step;
    const choice = (seed + step * (watcher + 1)) % 3;
    const cell = choice === 1 ? 'cell-1' : 'cell-2';
    const other = cell === 'cell-1' ? 'cell-2' : 'cell-1';
    if (choice === 0 && recorded < history.length) record(history[recorded++]!);
    else if (pending.get(cell)!.length > 0) send(pending.get(cell)!.shift()!);
    else if (recorded < history.length) record(history[recorded++]!);
    else send(pending.get(other)!.shift()!);
    // The reads of labels before a change answer now and then, between the streams' items.
    if (seed % 4 === 0) await reads();
  }
  await reads();
  return released;
}

describe('EventOrder', () => {
  it("releases the cells' changes in the history's order, not as they arrive", () => {
    const { released, record, send } = setup();
    record(a1);
    record(b1);
    send(b1);
    expect(released).toEqual([]);
    send(a1);
    expect(released).toEqual(['cell-1@11', 'cell-2@21']);
  });

  it('holds a change the history has not recorded yet', () => {
    const { released, record, send } = setup();
    send(a1);
    expect(released).toEqual([]);
    record(a1);
    expect(released).toEqual(['cell-1@11']);
  });

  it("does not wait for a change that is not the watch's: other labels, or a stream that went past it", async () => {
    const filtered = setup({ query: 'labelSelector=app%3Dweb' });
    filtered.record({ ...a1, labels: { app: 'web' } });
    filtered.record({ ...a2, labels: { app: 'db' } }); // matched before: the cell sends a DELETED
    filtered.record({ ...b1, labels: { app: 'db' } }); // never matched (read from the cell)
    filtered.record({ cell: 'cell-1', version: 13, name: 'c', labels: { app: 'web' } });
    filtered.send(a1);
    filtered.send(a2);
    filtered.send({ cell: 'cell-1', version: 13, name: 'c' });
    expect(filtered.released).toEqual(['cell-1@11', 'cell-1@12']);
    await reads();
    expect(filtered.released).toEqual(['cell-1@11', 'cell-1@12', 'cell-1@13']);
    // Only what the history could not tell was read: b's labels before 21 (a's were its own change's).
    expect(filtered.reads).toEqual(['cell-2@21']);

    const passed = setup({ query: 'fieldSelector=spec.x%3Dy' });
    passed.record(a1);
    passed.record(b1);
    passed.record(a2);
    passed.send(b1);
    expect(passed.released).toEqual([]);
    passed.send(a2); // cell-1's stream skipped 11: the cell filtered it
    expect(passed.released).toEqual(['cell-2@21', 'cell-1@12']);
  });

  it('reads the labels before a change once for every watch, and lets a watch wait for its cell when the read fails', async () => {
    const { history, clock, reads: asked, record } = setup({ query: 'labelSelector=app%3Dweb' });
    const watch = () => {
      const released: string[] = [];
      const order = new EventOrder<string>({
        history,
        relevance: watchScope('ns', new URLSearchParams('labelSelector=app%3Dweb')),
        start: new Map([
          ['cell-1', 10],
          ['cell-2', 20],
        ]),
        release: (item) => released.push(item),
        clock,
        logger,
      });
      return { order, released };
    };
    const [one, two] = [watch(), watch()];
    record({ ...a1, labels: { app: 'db' } });
    record({ ...b1, labels: { app: 'web' } });
    for (const each of [one, two]) each.order.change('cell-2', 21, 'cell-2@21');
    await reads();
    expect([one.released, two.released]).toEqual([['cell-2@21'], ['cell-2@21']]);
    expect(asked).toEqual(['cell-1@11']);

    const failing = setup({ query: 'labelSelector=app%3Dweb', unreadable: true, stallMs: 1_000 });
    failing.record({ ...a1, labels: { app: 'db' } });
    failing.record({ ...b1, labels: { app: 'web' } });
    failing.send(b1);
    await reads();
    expect(failing.released).toEqual([]);
    await failing.clock.advance(1_000);
    expect(failing.released).toEqual(['cell-2@21']);
  });

  it("lets a bookmark past a change release what came after it, and keeps each cell's items in order", () => {
    const { order, released, record, send } = setup({ query: 'fieldSelector=spec.x%3Dy' });
    record(a1);
    record(b1);
    send(b1);
    order.other('cell-1', 'bookmark-1@11', 11);
    expect(released).toEqual(['bookmark-1@11', 'cell-2@21']);
  });

  it('gives up on a change that never comes after stallMs, and releases it late if it does', async () => {
    const { clock, released, record, send } = setup({ stallMs: 1_000 });
    record(a1);
    record(b1);
    send(b1);
    await clock.advance(999);
    expect(released).toEqual([]);
    await clock.advance(1);
    expect(released).toEqual(['cell-2@21']);
    send(a1);
    expect(released).toEqual(['cell-2@21', 'cell-1@11']);
  });

  it("holds a streaming list's changes until every cell's start is known", () => {
    const { order, released, record, send } = setup({
      start: new Map<string, number | undefined>([
        ['cell-1', 10],
        ['cell-2', undefined],
      ]),
    });
    record(b1);
    record(a1);
    send(a1);
    expect(released).toEqual([]);
    order.startAt('cell-2', 21); // its initial events ended at 21: b1 was among them
    expect(released).toEqual(['cell-1@11']);
  });

  it('orders changes the history holds before the watch started only after its start', () => {
    const { released, record, send } = setup({
      start: new Map([
        ['cell-1', 11],
        ['cell-2', 20],
      ]),
    });
    record(a1);
    record(b1);
    send(b1);
    expect(released).toEqual(['cell-2@21']);
  });

  it("gives every filtered watch its cells' changes in the history's order, objects changing labels and cells alike", async () => {
    // The same names in both cells (an object and its copy while it moves), labels changing at random.
    const change = fc.record({
      cell: fc.constantFrom('cell-1', 'cell-2'),
      name: fc.constantFrom('a', 'b', 'c'),
      web: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(change, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 200 }),
        async (changes, seeds) => {
          const history = numbered(
            changes.map((c) => ({ cell: c.cell, name: c.name, labels: { app: c.web ? 'web' : 'db' } })),
          );
          // As each cell's filtered watch sends them: matching after the change, or before it.
          const before = new Map<string, boolean>();
          const delivered = history.filter((entry) => {
            const key = `${entry.cell}/${entry.name}`;
            const web = entry.labels!['app'] === 'web';
            const sent = web || before.get(key) === true;
            before.set(key, web);
            return sent;
          });
          const expected = delivered.map((c) => `${c.cell}@${c.version}`);
          for (const watcher of [0, 1])
            expect(await playWatcher(history, delivered, seeds, watcher, 'labelSelector=app%3Dweb')).toEqual(
              expected,
            );
        },
      ),
    );
  });

  it('gives every watch the same order, however their cells’ streams and the history interleave', async () => {
    const change = fc.record({
      cell: fc.constantFrom('cell-1', 'cell-2'),
      name: fc.constantFrom('a', 'b', 'c'),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(change, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 200 }),
        async (changes, seeds) => {
          const history = numbered(changes);
          const outputs = [
            await playWatcher(history, history, seeds, 0),
            await playWatcher(history, history, seeds, 1),
          ];
          const expected = history.map((c) => `${c.cell}@${c.version}`);
          expect(outputs[0]).toEqual(expected);
          expect(outputs[1]).toEqual(expected);
        },
      ),
    );
  });
});
