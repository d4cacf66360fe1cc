import { Fifo, realClock, type Clock } from '@cellfed/controller-kit';

/** One change of one object as a source's watch reported it, in the history's order. */
export interface HistoryEntry {
  /** Its place in this router's order of the resource's changes. */
  readonly seq: number;
  readonly source: string;
  /** The source's own resourceVersion of the change. */
  readonly version: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /**
   * The object's labels in that source before this change: what a filtered watch compares too (a change
   * that makes an object stop matching reaches it as a DELETED). `null` for an object new to the source,
   * undefined while the history does not know: the object's previous change is not among those it holds
   * (it keeps nothing per object), until {@link ResourceHistory.resolve} has read them.
   */
  readonly previousLabels: Labels | null | undefined;
}

type Labels = Readonly<Record<string, string>>;

/** Reads an object's labels in a source just before its change at `version`; null: it did not exist then. */
export type LabelsBefore = (
  source: string,
  change: { readonly namespace: string; readonly name: string; readonly version: number },
) => Promise<Labels | null>;

/** Every source's own resourceVersion at one point of the order. */
export type HistoryCut = ReadonlyMap<string, number>;

/** Where a source's own version falls in the history. */
export type HistoryPlace =
  /** Just after its change (or where the source stood, for a version between two of its changes). */
  | { readonly kind: 'at'; readonly seq: number; readonly cut: HistoryCut }
  /** Past what the history has of the source: its watch has not reported it yet. */
  | { readonly kind: 'ahead' }
  /** Before what the history holds of the source (evicted, before it began, or a source it does not follow). */
  | { readonly kind: 'expired' };

export interface ResourceHistoryOptions {
  readonly clock?: Clock;
  /** Changes younger than this are kept (kube-apiserver's watch cache keeps 75 s). */
  readonly retainMs?: number;
  /** Changes kept whatever their age, up to {@link maxEntries}. */
  readonly minEntries?: number;
  /** Never more than this many changes: the oldest go first. */
  readonly maxEntries?: number;
  /** How the labels before a change are read when the history does not hold them (none: they stay unknown). */
  readonly labelsBefore?: LabelsBefore;
  /** How many such reads run at once, for all the history's watches. */
  readonly maxReads?: number;
}

interface StoredEntry extends HistoryEntry {
  /** Every source's version just after it, indexed as `sources`. */
  readonly cut: readonly number[];
  readonly at: number;
  previousLabels: Labels | null | undefined;
  /** Whether its previous labels were asked for (once: a failed read leaves them unknown). */
  asked?: boolean;
}

/** A source as the history follows it. */
interface SourceState {
  readonly index: number;
  /** Where its watch began last: the seq before its first change then, and its version. */
  began: { seq: number; version: number };
  /** Its latest version: of its last change, or of a bookmark after it. */
  latest: number;
  /** The version the history answers for from (where it began, or its last evicted change) and its seq. */
  floor: number;
  floorSeq: number;
  /** Whether its watch is running; a source that stopped answers nothing until it begins again. */
  following: boolean;
  /** Its changes still held: versions and seqs, oldest first (from `head`). */
  versions: number[];
  seqs: number[];
  head: number;
  /**
   * The labels after each object's latest change the history holds (null once deleted): bounded by the
   * changes held, as kube-apiserver's watch cache window is, never by the objects of the federation.
   */
  recent: Map<string, { readonly seq: number; readonly labels: Labels | null }>;
}

const EMPTY: Labels = Object.freeze({});

/**
 * The changes of one resource in every source (cells and the control plane) in one order: the order this
 * router's own metadata watches reported them. It is what lets every watch through this router see the
 * cells' events in the same order, and what turns one object version's resourceVersion (one cell's) into a
 * place every cell can resume from: the cut of every source's version just after that change.
 *
 * Pure and synchronous; its feed (history-feed.ts) calls it as the sources' watches report. Listeners are
 * told of every change and bookmark.
 */
export class ResourceHistory {
  private readonly clock: Clock;
  private readonly retainMs: number;
  private readonly minEntries: number;
  private readonly maxEntries: number;
  private readonly sources = new Map<string, SourceState>();
  private entries: StoredEntry[] = [];
  private head = 0;
  private nextSeq = 0;
  /** The cut just after the last evicted change (before the oldest held one). */
  private baseCut: readonly number[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly labelsBefore: LabelsBefore | undefined;
  private readonly maxReads: number;
  /** Seqs whose previous labels are to be read, oldest first, and how many reads run. */
  private readonly toRead = new Fifo<number>();
  private reading = 0;

  constructor(options: ResourceHistoryOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.retainMs = options.retainMs ?? 75_000;
    this.minEntries = options.minEntries ?? 1_000;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.labelsBefore = options.labelsBefore;
    this.maxReads = options.maxReads ?? 8;
  }

  /**
   * A source's watch starts at its own version `from` (a list's): the history holds its changes after it.
   * A source beginning again (its watch broke and was listed anew) forgets what came before: a version
   * from before `from` is expired, as what happened in between was not seen.
   */
  begin(source: string, from: number): void {
    const state = this.sources.get(source);
    const seq = this.nextSeq - 1;
    if (!state) {
      this.sources.set(source, {
        index: this.sources.size,
        began: { seq, version: from },
        latest: from,
        floor: from,
        floorSeq: seq,
        following: true,
        versions: [],
        seqs: [],
        head: 0,
        recent: new Map(),
      });
    } else {
      state.latest = Math.max(state.latest, from);
      state.began = { seq, version: state.latest };
      state.floor = state.latest;
      state.floorSeq = seq;
      state.following = true;
      state.versions = [];
      state.seqs = [];
      state.head = 0;
      state.recent = new Map();
    }
    this.notify();
  }

  /** A source's watch stopped (it broke, or the source left): its changes are no longer known to be whole. */
  stop(source: string): void {
    const state = this.sources.get(source);
    if (state) state.following = false;
  }

  /** A change a source's watch reported; one not after the source's latest is ignored (a replay). */
  record(
    source: string,
    change: {
      type: HistoryEntry['type'];
      version: number;
      namespace: string;
      name: string;
      labels?: Labels;
    },
  ): void {
    const state = this.sources.get(source);
    if (!state?.following || change.version <= state.latest) return;
    const key = `${change.namespace}/${change.name}`;
    const previous = state.recent.get(key);
    const labels = change.labels ?? EMPTY;
    const seq = this.nextSeq++;
    state.recent.set(key, { seq, labels: change.type === 'DELETED' ? null : labels });
    state.latest = change.version;
    const cut = this.currentCut();
    const entry: StoredEntry = {
      seq,
      source,
      version: change.version,
      type: change.type,
      namespace: change.namespace,
      name: change.name,
      labels,
      previousLabels: change.type === 'ADDED' ? null : previous?.labels,
      cut,
      at: this.clock.now(),
    };
    this.entries.push(entry);
    state.versions.push(change.version);
    state.seqs.push(entry.seq);
    this.evict();
    this.notify();
  }

  /** A bookmark: the source has no change up to `version`. */
  progress(source: string, version: number): void {
    const state = this.sources.get(source);
    if (!state?.following || version <= state.latest) return;
    state.latest = version;
    this.notify();
  }

  /**
   * Where the source's own `version` falls: just after its last change at or before it, the earliest point
   * the source can have been at that version (a watch resumed there may repeat a change, never miss one).
   */
  place(source: string, version: number): HistoryPlace {
    const state = this.sources.get(source);
    if (!state?.following || version < state.floor) return { kind: 'expired' };
    if (version > state.latest) return { kind: 'ahead' };
    const index = this.lastAtOrBefore(state, version);
    const seq = index >= state.head ? state.seqs[index]! : state.floorSeq;
    const cut = this.cutAfter(seq);
    if (!cut) return { kind: 'expired' };
    cut.set(source, version);
    return { kind: 'at', seq, cut };
  }

  /**
   * Reads the labels before the change at `seq` when the history does not know them (once; reads run a few
   * at a time for all its watches, oldest change first); listeners are told when they are known. A read
   * that fails leaves them unknown.
   */
  resolve(seq: number): void {
    const entry = this.entry(seq) as StoredEntry | undefined;
    if (!entry || entry.previousLabels !== undefined || entry.asked || !this.labelsBefore) return;
    entry.asked = true;
    this.toRead.push(seq);
    this.readNext();
  }

  /** The seq of the source's change at exactly `version`, if the history holds one. */
  seqOf(source: string, version: number): number | undefined {
    const state = this.sources.get(source);
    if (!state?.following) return undefined;
    const index = this.lastAtOrBefore(state, version);
    return index >= state.head && state.versions[index] === version ? state.seqs[index] : undefined;
  }

  /** Every source's latest version, and the seq of the last change. */
  now(): { seq: number; cut: HistoryCut } {
    const cut = new Map<string, number>();
    for (const [source, state] of this.sources) if (state.following) cut.set(source, state.latest);
    return { seq: this.nextSeq - 1, cut };
  }

  /** The change at `seq`, if the history still holds it. */
  entry(seq: number): HistoryEntry | undefined {
    const index = seq - this.firstSeq();
    return index >= 0 ? this.entries[this.head + index] : undefined;
  }

  /** The seq of the oldest change held (the next one's, when none is). */
  firstSeq(): number {
    return this.entries[this.head]?.seq ?? this.nextSeq;
  }

  /** The seq the next change will get. */
  endSeq(): number {
    return this.nextSeq;
  }

  /** The source's latest version, if the history follows it. */
  latest(source: string): number | undefined {
    const state = this.sources.get(source);
    return state?.following ? state.latest : undefined;
  }

  /** Called after every change and bookmark; returns the unsubscribe. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The index of the source's last held change at or before `version` (below `head`: none), by bisection. */
  private lastAtOrBefore(state: SourceState, version: number): number {
    let low = state.head;
    let high = state.versions.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (state.versions[mid]! <= version) low = mid + 1;
      else high = mid;
    }
    return low - 1;
  }

  /** Every followed source's version just after the change at `seq`; undefined once that is evicted. */
  private cutAfter(seq: number): Map<string, number> | undefined {
    const first = this.firstSeq();
    if (seq < first - 1) return undefined;
    const at = seq === first - 1 ? this.baseCut : (this.entry(seq) as StoredEntry).cut;
    const cut = new Map<string, number>();
    for (const [id, state] of this.sources) {
      if (!state.following) continue;
      // A source the history began to follow after that point was where it began.
      cut.set(id, at[state.index] ?? state.began.version);
    }
    return cut;
  }

  private currentCut(): number[] {
    const cut: number[] = [];
    for (const state of this.sources.values()) cut[state.index] = state.latest;
    return cut;
  }

  private evict(): void {
    const now = this.clock.now();
    for (;;) {
      const count = this.entries.length - this.head;
      const oldest = this.entries[this.head];
      if (!oldest) break;
      const tooMany = count > this.maxEntries;
      const tooOld = count > this.minEntries && now - oldest.at > this.retainMs;
      if (!tooMany && !tooOld) break;
      this.head += 1;
      this.baseCut = oldest.cut;
      const state = this.sources.get(oldest.source)!;
      const key = `${oldest.namespace}/${oldest.name}`;
      if (state.recent.get(key)?.seq === oldest.seq) state.recent.delete(key);
      if (state.seqs[state.head] === oldest.seq) {
        state.floor = Math.max(state.floor, oldest.version);
        state.floorSeq = oldest.seq;
        state.head += 1;
        if (state.head > 1024 && state.head * 2 > state.versions.length) {
          state.versions = state.versions.slice(state.head);
          state.seqs = state.seqs.slice(state.head);
          state.head = 0;
        }
      }
    }
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  private readNext(): void {
    while (this.reading < this.maxReads && this.toRead.length > 0) {
      const entry = this.entry(this.toRead.shift()!) as StoredEntry | undefined;
      if (!entry) continue; // evicted while it waited
      this.reading += 1;
      this.labelsBefore!(entry.source, entry)
        .then(
          (labels) => {
            entry.previousLabels = labels;
            this.notify();
          },
          () => undefined, // unknown still: the watch waits for the cell's stream (its stall is the net)
        )
        .finally(() => {
          this.reading -= 1;
          this.readNext();
        });
    }
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }
}
