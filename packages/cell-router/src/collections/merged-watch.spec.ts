import { parseCellSetSpec } from '@cellfed/api';
import { PassThrough } from 'node:stream';

import { memoryLogger } from '@cellfed/controller-kit/testing';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';

import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { routingState } from '../routing/route-plan.ts';
import { decodeCellVersions, encodeCellVersions } from './cell-versions.ts';
import { serveMergedWatch, type CellWatcher } from './merged-watch.ts';
import { WatchBytesBudget, type WatchBufferLimits } from './watch-buffer.ts';
import { ResourceHistory } from '../history/resource-history.ts';
import { shownVersion } from './source-versions.ts';

type Meta = {
  namespace?: string;
  name?: string;
  resourceVersion: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { name: string; controller?: boolean }[];
};

/** A cell whose watches are streams the test writes events into; every opened target is recorded. */
function fakeCell(answer: (target: string) => number = () => 200) {
  const streams: PassThrough[] = [];
  const targets: string[] = [];
  const client: CellWatcher = {
    raw: async (_method, target) => {
      targets.push(target);
      const code = answer(target);
      const stream = new PassThrough();
      if (code !== 200) {
        stream.end(
          JSON.stringify({ kind: 'Status', code, reason: 'Expired', message: 'too old resource version' }),
        );
      } else streams.push(stream);
      return {
        statusCode: code,
        body: Object.assign(stream, { text: async () => stream.read()?.toString() ?? '' }),
      };
    },
  };
  const send = (type: string, metadata: Meta) =>
    streams.at(-1)!.write(`${JSON.stringify({ type, object: { kind: 'ConfigMap', metadata } })}\n`);
  /** A BOOKMARK at `resourceVersion`; `initialEnd`: the one that ends a streaming list's initial events. */
  const bookmark = (resourceVersion: string, initialEnd = false) =>
    streams.at(-1)!.write(
      `${JSON.stringify({
        type: 'BOOKMARK',
        object: {
          kind: 'ConfigMap',
          apiVersion: 'v1',
          metadata: {
            resourceVersion,
            ...(initialEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
          },
        },
      })}\n`,
    );
  return { client, streams, targets, send, bookmark };
}

const normal = parseCellSetSpec({
  cells: ['a', 'b'].map((id) => ({ id, state: 'Normal', kubeconfigSecretRef: { name: id } })),
});

async function until(what: string, check: () => boolean) {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!check()) throw new Error(`never: ${what}`);
}

function watch(
  cells: Record<string, ReturnType<typeof fakeCell>>,
  target: string,
  spec = normal,
  readCopy: (cell: string, ns: string, name: string) => Promise<{ metadata: Meta } | undefined> = async () =>
    undefined,
  /** How long each write to the client takes (a slow client: the cells' events wait in the queue). */
  writeDelayMs = 0,
  history?: ResourceHistory,
  buffer?: WatchBufferLimits,
) {
  const state = routingState(spec, 1);
  let current = state;
  // The control plane is watched too, for what each apiserver makes for itself (its own kube-root-ca.crt).
  const sources: Record<string, ReturnType<typeof fakeCell>> = {
    [CONTROL_PLANE_SOURCE]: fakeCell(),
    ...cells,
  };
  const lines: { type: string; object: { metadata: Meta } }[] = [];
  const held: typeof lines = [];
  const abort = new AbortController();
  let ended = false;
  let cut = false;
  let unblock: () => void = () => undefined;
  const done = serveMergedWatch(
    {
      state: () => current,
      resource: { group: '', resource: 'configmaps' },
      namespaceLabels: () => undefined,
      client: (cell) => sources[cell]?.client,
      target,
      headers: {},
      signal: abort.signal,
      readCopy,
      logger: memoryLogger().logger,
      ...(history ? { history } : {}),
      ...(buffer ? { buffer } : {}),
    },
    {
      start: () => undefined,
      // As the client's answer: what is written is held until a flush (or the end) sends it; a client that
      // reads nothing (writeDelayMs Infinity) until the answer is cut.
      write: async (line) => {
        if (writeDelayMs === Infinity) await new Promise<void>((resolve) => (unblock = resolve));
        else if (writeDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, writeDelayMs));
        held.push(JSON.parse(line.toString()));
      },
      cut: () => {
        cut = true;
        unblock();
      },
      flush: async () => {
        lines.push(...held.splice(0));
      },
      end: () => {
        lines.push(...held.splice(0));
        ended = true;
      },
    },
  );
  const home = (name: string) => state.table.route(state.table.keyOf({ namespace: 'ns', name }));
  /** The CellSet changes while the client watches. */
  const load = (next: typeof spec) => void (current = routingState(next, 2));
  return {
    lines,
    abort,
    done,
    home,
    load,
    isEnded: () => ended,
    isCut: () => cut,
    controlPlane: sources[CONTROL_PLANE_SOURCE]!,
  };
}

const joiningSpec = parseCellSetSpec({
  cells: [
    { id: 'a', state: 'Normal', kubeconfigSecretRef: { name: 'a' } },
    { id: 'b', state: 'Joining', kubeconfigSecretRef: { name: 'b' } },
  ],
});

/** Cell b joining cell a, their fake cells, and a name that moves from a to b. */
function joiningCells() {
  const state = routingState(joiningSpec, 1);
  const name = Array.from({ length: 200 }, (_, i) => `m-${i}`).find(
    (candidate) => state.table.route(state.table.keyOf({ namespace: 'ns', name: candidate })).newCell === 'b',
  )!;
  return { joining: joiningSpec, cells: { a: fakeCell(), b: fakeCell() }, name };
}

describe('serveMergedWatch', () => {
  it('holds at most its buffer for a client that reads nothing, then ends its watch, giving every byte back', async () => {
    const cells = { a: fakeCell(), b: fakeCell() };
    const budget = new WatchBytesBudget(1024 * 1024 * 1024);
    const w = watch(
      cells,
      '/api/v1/namespaces/ns/configmaps?watch=1',
      normal,
      undefined,
      Infinity,
      undefined,
      {
        perWatchBytes: 4 * 1024,
        stallMs: 50,
        budget,
      },
    );
    await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
    // 4,000 events of over 100 bytes: more than 400 KB the client never takes.
    for (let i = 0; i < 4_000; i++)
      cells.a.send('ADDED', { namespace: 'ns', name: `cm-${i}`, resourceVersion: String(10 + i) });
    await until('the buffer full', () => budget.held >= 4 * 1024);
    // The buffer's limit and the one chunk (64 KiB) read past it: the rest waits in the cell's stream.
    expect(budget.held).toBeLessThan(4 * 1024 + 64 * 1024 + 1024);
    expect(cells.a.streams[0]!.readableLength + cells.a.streams[0]!.writableLength).toBeGreaterThan(
      200 * 1024,
    );
    await w.done;
    expect(w.isCut()).toBe(true);
    expect(budget.held).toBe(0);
  });

  it('merges the cells, shows each object from its cell only, and stamps every event with the composite version', async () => {
    const cells = { a: fakeCell(), b: fakeCell() };
    const w = watch(cells, '/api/v1/namespaces/ns/configmaps?watch=1');
    await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
    const name = 'web';
    const own = w.home(name).oldCell as 'a' | 'b';
    const other = own === 'a' ? 'b' : 'a';
    cells[own].send('ADDED', { namespace: 'ns', name, resourceVersion: '10' });
    // The other cell's copy of the same name (a per-cell object, a leftover): hidden.
    cells[other].send('ADDED', { namespace: 'ns', name, resourceVersion: '20' });
    cells[own].send('MODIFIED', { namespace: 'ns', name, resourceVersion: '11' });
    await until('two events', () => w.lines.length === 2);
    expect(w.lines.map((line) => line.type)).toEqual(['ADDED', 'MODIFIED']);
    const last = decodeCellVersions(w.lines[1]!.object.metadata.resourceVersion)!;
    expect(Object.fromEntries(last)).toEqual({ [own]: '11', [other]: '20' });
    w.abort.abort();
    await w.done;
    expect(w.isEnded()).toBe(true);
  });

  it('shows what a cell’s CronJob made from that cell, wherever the ring puts its name, until it is deleted', async () => {
    const cells = { a: fakeCell(), b: fakeCell() };
    const w = watch(cells, '/api/v1/namespaces/ns/configmaps?watch=1');
    await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
    const name = 'nightly-29170000';
    const other = w.home(name).oldCell === 'a' ? 'b' : 'a';
    const made = [{ name: 'nightly', controller: true }];
    cells[other].send('ADDED', { namespace: 'ns', name, resourceVersion: '5', ownerReferences: made });
    // Orphaned (its CronJob deleted with --cascade=orphan): still the same object, where it is.
    cells[other].send('MODIFIED', { namespace: 'ns', name, resourceVersion: '6', ownerReferences: [] });
    cells[other].send('DELETED', { namespace: 'ns', name, resourceVersion: '7' });
    // A leftover elsewhere that no cell's controller made stays hidden.
    const stray = Array.from({ length: 50 }, (_, i) => `stray-${i}`).find(
      (n) => w.home(n).oldCell !== other,
    )!;
    cells[other].send('ADDED', { namespace: 'ns', name: stray, resourceVersion: '8' });
    await until('three events', () => w.lines.length === 3);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(w.lines.map((line) => `${line.type} ${line.object.metadata.name}`)).toEqual([
      `ADDED ${name}`,
      `MODIFIED ${name}`,
      `DELETED ${name}`,
    ]);
    w.abort.abort();
    await w.done;
  });

  it('resumes each cell from its part of the composite version, and again after a cell ends its watch', async () => {
    const cells = { a: fakeCell(), b: fakeCell() };
    const rv = encodeCellVersions(
      new Map([
        ['a', '100'],
        ['b', '200'],
      ]),
    );
    const w = watch(
      cells,
      `/api/v1/configmaps?watch=1&resourceVersion=${encodeURIComponent(rv)}&labelSelector=x`,
    );
    await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
    expect(cells.a.targets[0]).toContain('resourceVersion=100');
    expect(cells.b.targets[0]).toContain('resourceVersion=200');
    expect(cells.a.targets[0]).toContain('labelSelector=x');
    const name = ['x1', 'x2', 'x3', 'x4'].find((candidate) => w.home(candidate).oldCell === 'a')!;
    cells.a.send('ADDED', { namespace: 'ns', name, resourceVersion: '150' });
    await until('the event', () => w.lines.length === 1);
    cells.a.streams[0]!.end();
    await until('the reopened watch', () => cells.a.streams.length === 2);
    expect(cells.a.targets[1]).toContain('resourceVersion=150');
    w.abort.abort();
    await w.done;
  });

  it('turns a cell that no longer has the version into a 410 for the client', async () => {
    const cells = { a: fakeCell(), b: fakeCell() };
    const w = watch(cells, '/api/v1/configmaps?watch=1');
    await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
    cells.b.streams[0]!.write(
      `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } })}\n`,
    );
    await w.done;
    expect(w.lines).toEqual([
      { type: 'ERROR', object: expect.objectContaining({ code: 410, reason: 'Expired' }) },
    ]);
    expect(w.isEnded()).toBe(true);
  });

  it('goes on without a cell drained out of the CellSet, after a second of its last events; other cells leaving end the watch with a 410', async () => {
    const spec = (b?: 'Normal' | 'Draining' | 'Down') =>
      parseCellSetSpec({
        cells: [
          { id: 'a', state: 'Normal', kubeconfigSecretRef: { name: 'a' } },
          ...(b ? [{ id: 'b', state: b, kubeconfigSecretRef: { name: 'b' } }] : []),
        ],
      });
    const table = routingState(normal, 1).table;
    const placedIn = (cell: string) =>
      Array.from({ length: 100 }, (_, i) => `cm-${i}`).find(
        (name) => table.route(table.keyOf({ namespace: 'ns', name })).oldCell === cell,
      )!;
    const tick = () => new Promise((resolve) => setTimeout(resolve, 1_100));
    const cells = { a: fakeCell(), b: fakeCell() };
    const w = watch(cells, '/api/v1/configmaps?watch=1');
    await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
    cells.b.send('ADDED', { namespace: 'ns', name: placedIn('b'), resourceVersion: '200' });
    await until('b’s event', () => w.lines.length === 1);
    // Cell b drains (its objects move to a), then leaves the CellSet.
    w.load(spec('Draining'));
    await tick();
    w.load(spec());
    await tick();
    await tick();
    cells.a.send('ADDED', { namespace: 'ns', name: placedIn('a'), resourceVersion: '100' });
    await until('a’s event', () => w.lines.length === 2);
    expect(w.isEnded()).toBe(false);
    const versions = decodeCellVersions(w.lines[1]!.object.metadata.resourceVersion)!;
    expect([...versions.keys()]).not.toContain('b');
    expect(versions.get('a')).toBe('100');
    w.abort.abort();
    await w.done;

    // A resume from a version that still names it: 410 (whether it saw b's last changes is not known).
    const rv = encodeCellVersions(
      new Map([
        ['a', '100'],
        ['b', '200'],
      ]),
    );
    const resumed = watch(
      { a: fakeCell() },
      `/api/v1/configmaps?watch=1&resourceVersion=${encodeURIComponent(rv)}`,
      spec(),
    );
    expect(await resumed.done).toMatchObject({ code: 410, status: { reason: 'Expired' } });

    // Down is not drained, nor is a cell taken out of the CellSet without a drain: what the client holds
    // from it no source will ever delete.
    for (const leaving of [spec('Down'), spec()]) {
      const two = { a: fakeCell(), b: fakeCell() };
      const failed = watch(two, '/api/v1/configmaps?watch=1');
      await until('both watches', () => two.a.streams.length === 1 && two.b.streams.length === 1);
      failed.load(leaving);
      await failed.done;
      expect(failed.lines).toEqual([
        {
          type: 'ERROR',
          object: expect.objectContaining({
            code: 410,
            reason: 'Expired',
            message: expect.stringContaining('cell b'),
          }),
        },
      ]);
    }
  }, 15_000); // the watch's join timer ticks each real second: four ticks here

  it('never shows a DELETED for an object that only moved: one MODIFIED with the new copy instead', async () => {
    const { joining, cells, name } = joiningCells();
    const w = watch(cells, '/api/v1/namespaces/ns/configmaps?watch=1', joining, async () => undefined);
    await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
    cells.a.send('ADDED', { namespace: 'ns', name, resourceVersion: '1' });
    cells.a.send('MODIFIED', {
      namespace: 'ns',
      name,
      resourceVersion: '2',
      labels: { [REBALANCE_STATUS_LABEL]: MIGRATING },
    });
    await until('old copy events', () => w.lines.length === 2);
    // The copy in the new cell while it moves: invisible.
    cells.b.send('ADDED', { namespace: 'ns', name, resourceVersion: '50', labels: { copied: 'yes' } });
    cells.a.send('MODIFIED', {
      namespace: 'ns',
      name,
      resourceVersion: '3',
      labels: { [REBALANCE_STATUS_LABEL]: MIGRATED },
    });
    await until('the switch', () => w.lines.length === 3);
    expect(w.lines[2]).toMatchObject({
      type: 'MODIFIED',
      object: { metadata: { labels: { copied: 'yes' } } },
    });
    // The leftover going away later: invisible. The new copy's own changes: visible.
    cells.a.send('DELETED', {
      namespace: 'ns',
      name,
      resourceVersion: '4',
      labels: { [REBALANCE_STATUS_LABEL]: MIGRATED },
    });
    cells.b.send('MODIFIED', {
      namespace: 'ns',
      name,
      resourceVersion: '51',
      labels: { copied: 'yes', v: '2' },
    });
    await until('the new copy changing', () => w.lines.length === 4);
    expect(w.lines.map((line) => line.type)).toEqual(['ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED']);
    expect(w.lines[3]!.object.metadata.labels).toEqual({ copied: 'yes', v: '2' });
    w.abort.abort();
    await w.done;
  });

  it('never shows an ADDED for an object the client has: the new copy arriving after the switch is a MODIFIED', async () => {
    const { joining, cells, name } = joiningCells();
    const newCopy = { metadata: { namespace: 'ns', name, resourceVersion: '50', labels: { copied: 'yes' } } };
    const w = watch(cells, '/api/v1/namespaces/ns/configmaps?watch=1', joining, async (cell) =>
      cell === 'b' ? newCopy : undefined,
    );
    await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
    cells.a.send('ADDED', { namespace: 'ns', name, resourceVersion: '1' });
    // The old cell says migrated before the new cell's stream has said anything about the copy.
    cells.a.send('MODIFIED', {
      namespace: 'ns',
      name,
      resourceVersion: '3',
      labels: { [REBALANCE_STATUS_LABEL]: MIGRATED },
    });
    await until('the switch', () => w.lines.length === 2);
    // The new copy's own event repeats what the switch showed: nothing more for the client.
    cells.b.send('ADDED', newCopy.metadata);
    // Deleted in its new cell and created again: that one is an ADDED (the old leftover is still there).
    cells.b.send('DELETED', { ...newCopy.metadata, resourceVersion: '51' });
    cells.b.send('ADDED', { ...newCopy.metadata, resourceVersion: '52' });
    await until('delete and create', () => w.lines.length === 4);
    expect(w.lines.map((line) => [line.type, line.object.metadata.name])).toEqual([
      ['ADDED', name],
      ['MODIFIED', name],
      ['DELETED', name],
      ['ADDED', name],
    ]);
    w.abort.abort();
    await w.done;
  });

  it('refuses a version it did not issue, and a cell refusing the watch refuses it for the client', async () => {
    const cells = {
      a: fakeCell(),
      b: fakeCell((target) => (target.includes('resourceVersion=7') ? 410 : 200)),
    };
    expect((await watch(cells, '/api/v1/configmaps?watch=1&resourceVersion=x1').done).status).toMatchObject({
      code: 400,
    });
    // An object version no history places (none here) is expired, so the client lists again.
    expect((await watch(cells, '/api/v1/configmaps?watch=1&resourceVersion=123').done).status).toMatchObject({
      code: 410,
      reason: 'Expired',
    });
    const rv = encodeCellVersions(
      new Map([
        ['a', '5'],
        ['b', '7'],
      ]),
    );
    const refused = await watch(cells, `/api/v1/configmaps?watch=1&resourceVersion=${encodeURIComponent(rv)}`)
      .done;
    expect(refused.status).toMatchObject({ code: 410, message: expect.stringContaining('cell b') });
  });

  describe('a streaming list (sendInitialEvents, client-go ≥ 0.35)', () => {
    const STREAMING =
      '/api/v1/namespaces/ns/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';

    it('merges the cells’ initial events and ends them with one BOOKMARK, after every cell has ended its own', async () => {
      const cells = { a: fakeCell(), b: fakeCell() };
      const w = watch(cells, STREAMING);
      await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
      for (const cell of ['a', 'b'] as const) {
        expect(cells[cell].targets[0]).toContain('sendInitialEvents=true');
        expect(cells[cell].targets[0]).toContain('resourceVersionMatch=NotOlderThan');
        expect(cells[cell].targets[0]).toContain('allowWatchBookmarks=true');
      }
      const names = ['x1', 'x2', 'x3', 'x4', 'x5', 'x6'];
      const inA = names.filter((name) => w.home(name).oldCell === 'a');
      const inB = names.filter((name) => w.home(name).oldCell === 'b');
      expect(inA.length * inB.length).toBeGreaterThan(0);
      // The control plane's own kube-root-ca.crt is one of the objects; the cells' copies never show.
      cells.a.send('ADDED', { namespace: 'ns', name: 'kube-root-ca.crt', resourceVersion: '95' });
      await until('the control plane’s watch', () => w.controlPlane.streams.length === 1);
      w.controlPlane.send('ADDED', { namespace: 'ns', name: 'kube-root-ca.crt', resourceVersion: '7' });
      w.controlPlane.bookmark('9', true);
      inA.forEach((name, i) =>
        cells.a.send('ADDED', { namespace: 'ns', name, resourceVersion: `${90 - i}` }),
      );
      cells.a.bookmark('100', true);
      // Cell b is not done: nothing closes the client's initial events yet, not even a plain bookmark.
      cells.b.bookmark('150');
      await until('cell a’s objects', () => w.lines.length === inA.length + 1);
      inB.forEach((name) => cells.b.send('ADDED', { namespace: 'ns', name, resourceVersion: '180' }));
      cells.b.bookmark('200', true);
      await until('the end of the initial events', () => w.lines.length === names.length + 2);
      expect(w.lines.slice(0, -1).map((event) => event.type)).toEqual([...names, 'own'].map(() => 'ADDED'));
      expect(w.lines.slice(0, -1).map((event) => event.object.metadata.name)).toEqual([
        'kube-root-ca.crt',
        ...inA,
        ...inB,
      ]);
      expect(w.lines[0]!.object.metadata.resourceVersion).toMatch(/^cf1\./);
      const end = w.lines.at(-1)!;
      expect(end.type).toBe('BOOKMARK');
      expect(end.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
      expect(Object.fromEntries(decodeCellVersions(end.object.metadata.resourceVersion)!)).toEqual({
        a: '100',
        b: '200',
        [CONTROL_PLANE_SOURCE]: '9',
      });
      // Afterwards: a watch as any other (bookmarks pass, changes carry the composite version).
      cells.a.send('MODIFIED', { namespace: 'ns', name: inA[0]!, resourceVersion: '101' });
      await until('the change', () => w.lines.length === names.length + 3);
      expect(w.lines.at(-1)!.type).toBe('MODIFIED');
      w.abort.abort();
      await w.done;
    });

    it('shows an object whose move completed as one ADDED of its new copy, never a MODIFIED', async () => {
      const { joining, cells, name } = joiningCells();
      const newCopy = {
        metadata: { namespace: 'ns', name, resourceVersion: '50', labels: { copied: 'yes' } },
      };
      const w = watch(cells, STREAMING, joining, async (cell) => (cell === 'b' ? newCopy : undefined));
      await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
      // The old cell's leftover, migrated, comes first; then the new cell's copy.
      cells.a.send('ADDED', {
        namespace: 'ns',
        name,
        resourceVersion: '3',
        labels: { [REBALANCE_STATUS_LABEL]: MIGRATED },
      });
      cells.a.bookmark('10', true);
      cells.b.send('ADDED', newCopy.metadata);
      cells.b.bookmark('60', true);
      await until('the control plane’s watch', () => w.controlPlane.streams.length === 1);
      w.controlPlane.bookmark('9', true);
      await until('the end of the initial events', () => w.lines.at(-1)?.type === 'BOOKMARK');
      expect(w.lines.map((event) => [event.type, event.object.metadata.labels])).toEqual([
        ['ADDED', { copied: 'yes' }],
        ['BOOKMARK', undefined],
      ]);
      w.abort.abort();
      await w.done;
    });

    it('resumes a cell that ends its watch right after its initial events, even before the client got them', async () => {
      const cells = { a: fakeCell(), b: fakeCell() };
      const w = watch(cells, STREAMING, normal, async () => undefined, 20);
      await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
      const name = ['x1', 'x2', 'x3', 'x4'].find((candidate) => w.home(candidate).oldCell === 'a')!;
      await until('the control plane’s watch', () => w.controlPlane.streams.length === 1);
      w.controlPlane.bookmark('9', true);
      cells.b.bookmark('200', true);
      cells.a.send('ADDED', { namespace: 'ns', name, resourceVersion: '90' });
      cells.a.bookmark('100', true);
      // The cell's own timeout, while the client is still being written the first event.
      cells.a.streams[0]!.end();
      await until('the end of the initial events', () => w.lines.some((event) => event.type === 'BOOKMARK'));
      await until('the resumed watch', () => cells.a.streams.length === 2);
      expect(cells.a.targets[1]).toContain('resourceVersion=100');
      expect(cells.a.targets[1]).not.toContain('sendInitialEvents');
      expect(w.lines.map((event) => event.type)).toEqual(['ADDED', 'BOOKMARK']);
      w.abort.abort();
      await w.done;
    });

    it('ends the client’s watch with a 410 when a cell’s watch ends before its initial events did', async () => {
      const cells = { a: fakeCell(), b: fakeCell() };
      const w = watch(cells, STREAMING);
      await until('both watches', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
      cells.a.bookmark('100', true);
      cells.b.streams[0]!.end();
      await w.done;
      expect(w.lines).toEqual([
        { type: 'ERROR', object: expect.objectContaining({ code: 410, reason: 'Expired' }) },
      ]);
      // Nothing was resumed half-way.
      expect(cells.b.targets).toHaveLength(1);
    });
  });

  describe("with the resource's history (one order, one version per object version)", () => {
    /** A history of the control plane and cells a and b, begun at 1, 10 and 20. */
    function historyOf() {
      const history = new ResourceHistory();
      history.begin(CONTROL_PLANE_SOURCE, 1);
      history.begin('a', 10);
      history.begin('b', 20);
      return history;
    }
    const homedIn = (cell: string, w: ReturnType<typeof watch>) => {
      for (let i = 0; i < 1000; i++) if (w.home(`o-${i}`).oldCell === cell) return `o-${i}`;
      throw new Error(`no name homed in ${cell}`);
    };

    it("sends the cells' changes after where the history is in its order, each at its own version", async () => {
      const history = historyOf();
      const cells = { a: fakeCell(), b: fakeCell() };
      const w = watch(cells, '/api/v1/namespaces/ns/configmaps?watch=1', normal, undefined, 0, history);
      await until('both cells watched', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
      // From their own now: each sends what it holds first, as one apiserver does (asked as a streaming
      // list, whose closing BOOKMARK, not passed on, says where its changes start).
      expect(cells.a.targets[0]).toContain('sendInitialEvents=true');
      expect(cells.a.targets[0]).not.toContain('resourceVersion=');
      // Of the control plane, only what it makes for itself.
      expect(w.controlPlane.targets[0]).toContain('fieldSelector=metadata.name%3Dkube-root-ca.crt');
      const x = homedIn('a', w);
      const y = homedIn('b', w);
      const held = w.home('held').oldCell === 'a' ? 'held' : homedIn('a', w);
      cells.a.send('ADDED', { namespace: 'ns', name: held, resourceVersion: '9' });
      await until('what cell a holds', () => w.lines.length === 1);
      expect(w.lines[0]!.object.metadata.resourceVersion).toBe(shownVersion('a', '9'));
      w.lines.splice(0);
      cells.a.bookmark('10', true);
      cells.b.bookmark('20', true);
      w.controlPlane.bookmark('1', true);
      history.record('a', { type: 'ADDED', version: 11, namespace: 'ns', name: x });
      history.record('b', { type: 'ADDED', version: 21, namespace: 'ns', name: y });
      cells.b.send('ADDED', { namespace: 'ns', name: y, resourceVersion: '21' });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(w.lines).toEqual([]);
      cells.a.send('ADDED', { namespace: 'ns', name: x, resourceVersion: '11' });
      await until('both sent', () => w.lines.length === 2);
      expect(
        w.lines.map((line) => [line.object.metadata.name, line.object.metadata.resourceVersion]),
      ).toEqual([
        [x, shownVersion('a', '11')],
        [y, shownVersion('b', '21')],
      ]);
      // No BOOKMARK reached the client: it did not ask for a streaming list.
      expect(w.lines.map((line) => line.type)).not.toContain('BOOKMARK');
      w.abort.abort();
      await w.done;
    });

    it('starts from an object version where the history places it: each cell at the cut just after it', async () => {
      const history = historyOf();
      history.record('b', { type: 'ADDED', version: 21, namespace: 'ns', name: 'p' });
      history.record('a', { type: 'MODIFIED', version: 11, namespace: 'ns', name: 'q' });
      history.record('b', { type: 'MODIFIED', version: 22, namespace: 'ns', name: 'p' });
      const cells = { a: fakeCell(), b: fakeCell() };
      const from = shownVersion('a', '11')!;
      const w = watch(
        cells,
        `/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=${from}`,
        normal,
        undefined,
        0,
        history,
      );
      await until('both cells watched', () => cells.a.streams.length === 1 && cells.b.streams.length === 1);
      expect(cells.a.targets[0]).toContain('resourceVersion=11');
      expect(cells.b.targets[0]).toContain('resourceVersion=21');
      w.abort.abort();
      await w.done;
      // Before what the history holds: expired, as one apiserver's too old version.
      const old = watch(
        cells,
        `/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=${shownVersion('a', '9')}`,
        normal,
        undefined,
        0,
        history,
      );
      expect((await old.done).status).toMatchObject({ code: 410, reason: 'Expired' });
    });
  });
});
