import fc from 'fast-check';
import type { Clock } from '@cellfed/controller-kit';

import { ResourceHistory, type HistoryEntry } from './resource-history.ts';

const SOURCES = ['cell-1', 'cell-2', 'cell-3'];

/** A clock moved by hand, synchronously: the history only reads it. */
class StepClock implements Clock {
  private current = 0;
  now(): number {
    return this.current;
  }
  setTimer(): never {
    throw new Error('the history sets no timer');
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/** One step of the sources' watches as the router's feed sees them, in arrival order. */
type Step =
  | { kind: 'change'; source: number; name: number; gap: number }
  | { kind: 'bookmark'; source: number; gap: number }
  | { kind: 'tick'; ms: number };

const steps = fc.array(
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant('change' as const),
        source: fc.nat(2),
        name: fc.nat(5),
        gap: fc.integer({ min: 1, max: 3 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('bookmark' as const),
        source: fc.nat(2),
        gap: fc.integer({ min: 1, max: 3 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 40_000 }) }),
    },
  ),
  { maxLength: 120 },
);

interface Played {
  history: ResourceHistory;
  /** Every change recorded, in order, with every source's version just after it. */
  changes: { source: string; version: number; cut: Map<string, number> }[];
  clock: StepClock;
}

/** Plays `script` into a history whose sources began at version 100, 200, 300. */
function play(script: Step[], options: { minEntries?: number; maxEntries?: number } = {}): Played {
  const clock = new StepClock();
  const history = new ResourceHistory({
    clock,
    retainMs: 75_000,
    minEntries: options.minEntries ?? 0,
    maxEntries: options.maxEntries ?? 1_000,
  });
  const versions = new Map(SOURCES.map((source, i) => [source, (i + 1) * 100]));
  for (const [source, version] of versions) history.begin(source, version);
  const changes: Played['changes'] = [];
  for (const step of script) {
    if (step.kind === 'tick') {
      clock.advance(step.ms);
      continue;
    }
    const source = SOURCES[step.source]!;
    const version = versions.get(source)! + step.gap;
    versions.set(source, version);
    if (step.kind === 'bookmark') history.progress(source, version);
    else {
      history.record(source, {
        type: 'MODIFIED',
        version,
        namespace: 'ns',
        name: `o-${step.name}`,
        labels: { n: String(step.name) },
      });
      changes.push({ source, version, cut: new Map(versions) });
    }
  }
  return { history, changes, clock };
}

/** The changes a watch resumed from `cut` gets: each source's after its version there, in history order. */
function resumedFrom(history: ResourceHistory, cut: ReadonlyMap<string, number>): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  for (let seq = history.firstSeq(); seq < history.endSeq(); seq++) {
    const entry = history.entry(seq)!;
    if (entry.version > cut.get(entry.source)!) out.push(entry);
  }
  return out;
}

describe('ResourceHistory', () => {
  it('places each change it holds just after itself, with every source where it stood then', () => {
    fc.assert(
      fc.property(steps, (script) => {
        const { history, changes } = play(script, { minEntries: 10_000 });
        changes.forEach((change, seq) => {
          const place = history.place(change.source, change.version);
          expect(place).toEqual({ kind: 'at', seq, cut: change.cut });
        });
      }),
    );
  });

  it('resumes from a change with exactly the changes after it, in the same order for every watcher', () => {
    fc.assert(
      fc.property(steps, (script) => {
        const { history, changes } = play(script, { minEntries: 10_000 });
        changes.forEach((change, seq) => {
          const place = history.place(change.source, change.version);
          if (place.kind !== 'at') throw new Error('held change not placed');
          const resumed = resumedFrom(history, place.cut).map((entry) => entry.seq);
          const suffix = changes.slice(seq + 1).map((_, i) => seq + 1 + i);
          expect(resumed).toEqual(suffix);
        });
      }),
    );
  });

  it('places a version between two changes at the earlier one: a resumed watch may repeat, never miss', () => {
    fc.assert(
      fc.property(steps, fc.nat(2), fc.nat(30), (script, sourceIndex, offset) => {
        const { history, changes } = play(script, { minEntries: 10_000 });
        const source = SOURCES[sourceIndex]!;
        const latest = history.latest(source)!;
        const version = Math.max((sourceIndex + 1) * 100, latest - offset);
        const place = history.place(source, version);
        if (place.kind !== 'at') throw new Error(`not placed: ${place.kind}`);
        // Every change of the source after `version`, and every other source's change after the source
        // reached it (the last change of the source at or before it), is resumed.
        const lastAtOrBefore = changes.findLastIndex((c) => c.source === source && c.version <= version);
        const missed = changes
          .slice(lastAtOrBefore + 1)
          .filter((c) => (c.source === source ? c.version > version : true))
          .filter((c) => c.version <= place.cut.get(c.source)!);
        expect(missed).toEqual([]);
      }),
    );
  });

  it('answers ahead for a version its source has not reported, expired for one before it began', () => {
    const { history } = play([{ kind: 'change', source: 0, name: 1, gap: 1 }]);
    expect(history.place('cell-1', 102)).toEqual({ kind: 'ahead' });
    expect(history.place('cell-1', 99)).toEqual({ kind: 'expired' });
    expect(history.place('cell-9', 1)).toEqual({ kind: 'expired' });
    history.progress('cell-1', 150);
    expect(history.place('cell-1', 120)).toMatchObject({ kind: 'at', seq: 0 });
  });

  it('forgets changes past its retention: their versions are expired, the rest still placed exactly', () => {
    fc.assert(
      fc.property(steps, fc.integer({ min: 1, max: 30 }), (script, maxEntries) => {
        const { history, changes } = play(script, { maxEntries });
        changes.forEach((change, seq) => {
          const place = history.place(change.source, change.version);
          if (seq >= history.firstSeq()) expect(place).toEqual({ kind: 'at', seq, cut: change.cut });
          else if (place.kind === 'at') {
            // Still placed only as the last evicted change of all, at the cut just before the held ones.
            expect(seq).toBe(history.firstSeq() - 1);
            expect(place.cut).toEqual(change.cut);
          }
        });
        expect(history.endSeq() - history.firstSeq()).toBeLessThanOrEqual(maxEntries);
      }),
    );
  });

  it('stays exact through many evictions (its arrays compact)', () => {
    const history = new ResourceHistory({ maxEntries: 100, minEntries: 0 });
    history.begin('cell-1', 0);
    history.begin('cell-2', 0);
    for (let i = 1; i <= 5_000; i++)
      history.record(i % 3 ? 'cell-1' : 'cell-2', {
        type: 'MODIFIED',
        version: i,
        namespace: 'ns',
        name: 'a',
      });
    expect(history.firstSeq()).toBe(4_900);
    expect(history.place('cell-1', 4_999)).toEqual({
      kind: 'at',
      seq: 4_998,
      cut: new Map([
        ['cell-1', 4_999],
        ['cell-2', 4_998],
      ]),
    });
    expect(history.place('cell-1', 4_000)).toEqual({ kind: 'expired' });
  });

  it('keeps 75 seconds of changes beyond its minimum', () => {
    const clock = new StepClock();
    const history = new ResourceHistory({ clock, retainMs: 75_000, minEntries: 1 });
    history.begin('cell-1', 0);
    history.record('cell-1', { type: 'ADDED', version: 1, namespace: 'ns', name: 'a' });
    clock.advance(70_000);
    history.record('cell-1', { type: 'ADDED', version: 2, namespace: 'ns', name: 'b' });
    expect(history.firstSeq()).toBe(0);
    clock.advance(10_000);
    history.record('cell-1', { type: 'ADDED', version: 3, namespace: 'ns', name: 'c' });
    expect(history.firstSeq()).toBe(1);
  });

  it("remembers an object's labels before each change in its source", () => {
    const history = new ResourceHistory();
    history.begin('cell-1', 10);
    history.begin('cell-2', 10);
    history.record('cell-1', {
      type: 'MODIFIED',
      version: 11,
      namespace: 'ns',
      name: 'a',
      labels: { x: '1' },
    });
    history.record('cell-1', {
      type: 'MODIFIED',
      version: 12,
      namespace: 'ns',
      name: 'a',
      labels: { x: '2' },
    });
    history.record('cell-2', { type: 'ADDED', version: 11, namespace: 'ns', name: 'a', labels: { x: '3' } });
    history.record('cell-1', {
      type: 'DELETED',
      version: 13,
      namespace: 'ns',
      name: 'a',
      labels: { x: '2' },
    });
    history.record('cell-1', { type: 'ADDED', version: 14, namespace: 'ns', name: 'a' });
    expect([0, 1, 2, 3, 4].map((seq) => history.entry(seq)!.previousLabels)).toEqual([
      undefined, // changed before the history began
      { x: '1' },
      null,
      { x: '2' },
      null,
    ]);
  });

  it('keeps labels only of the changes it holds, and reads those before any other change once, for every watch', async () => {
    const reads: string[] = [];
    let answer: (labels: Record<string, string>) => void = () => undefined;
    const history = new ResourceHistory({
      minEntries: 0,
      maxEntries: 2,
      labelsBefore: (source, change) => {
        reads.push(`${source}:${change.namespace}/${change.name}@${change.version}`);
        return new Promise((resolve) => (answer = resolve));
      },
    });
    let told = 0;
    history.listen(() => (told += 1));
    history.begin('cell-1', 10);
    history.record('cell-1', { type: 'ADDED', version: 11, namespace: 'ns', name: 'a', labels: { x: '1' } });
    history.record('cell-1', { type: 'ADDED', version: 12, namespace: 'ns', name: 'b' });
    history.record('cell-1', { type: 'ADDED', version: 13, namespace: 'ns', name: 'c' });
    // a's ADDED is evicted (two changes held), and its labels with it.
    history.record('cell-1', { type: 'MODIFIED', version: 14, namespace: 'ns', name: 'a' });
    expect(history.firstSeq()).toBe(2);
    expect(history.entry(3)!.previousLabels).toBeUndefined();
    history.resolve(3);
    history.resolve(3);
    history.resolve(2); // an ADDED: nothing to read
    expect(reads).toEqual(['cell-1:ns/a@14']);
    const before = told;
    answer({ x: '1' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(history.entry(3)!.previousLabels).toEqual({ x: '1' });
    expect(told).toBe(before + 1);
  });

  it('answers nothing of a source that stopped until it begins again, and nothing from before that', () => {
    const history = new ResourceHistory();
    history.begin('cell-1', 10);
    history.record('cell-1', { type: 'ADDED', version: 11, namespace: 'ns', name: 'a' });
    history.stop('cell-1');
    expect(history.place('cell-1', 11)).toEqual({ kind: 'expired' });
    history.record('cell-1', { type: 'ADDED', version: 12, namespace: 'ns', name: 'b' });
    expect(history.endSeq()).toBe(1);
    history.begin('cell-1', 20);
    expect(history.place('cell-1', 11)).toEqual({ kind: 'expired' });
    expect(history.place('cell-1', 20)).toMatchObject({ kind: 'at', seq: 0, cut: new Map([['cell-1', 20]]) });
  });

  it('tells its listeners of every change and bookmark', () => {
    const history = new ResourceHistory();
    let told = 0;
    const unlisten = history.listen(() => (told += 1));
    history.begin('cell-1', 1);
    history.record('cell-1', { type: 'ADDED', version: 2, namespace: 'ns', name: 'a' });
    history.progress('cell-1', 5);
    history.progress('cell-1', 4); // behind: no news
    unlisten();
    history.progress('cell-1', 6);
    expect(told).toBe(3);
  });
});
