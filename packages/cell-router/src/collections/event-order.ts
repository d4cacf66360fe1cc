import { Fifo, type Clock, type Timer } from '@cellfed/controller-kit';
import type { Logger } from 'pino';

import type { HistoryEntry, ResourceHistory } from '../history/resource-history.ts';
import type { Relevance } from '../history/watch-scope.ts';

/** How many changes past the one a watch waits on have their labels before them read with it. */
const LOOK_AHEAD = 64;

/** One item of a cell's watch stream, kept in the cell's order. */
interface CellItem<T> {
  /** A change (ADDED, MODIFIED, DELETED) with its own version: released in the history's order. */
  readonly change?: number;
  /** A version the stream has passed without a change (a BOOKMARK's). */
  readonly passes?: number;
  readonly item: T;
}

export interface EventOrderOptions<T> {
  readonly history: ResourceHistory;
  /** Whether the watch gets a change (its namespace and selectors judged on the change's metadata). */
  readonly relevance: (entry: HistoryEntry) => Relevance;
  /** Each cell's version the watch starts after; a cell listed with undefined starts when {@link EventOrder.startAt} says. */
  readonly start: ReadonlyMap<string, number | undefined>;
  readonly release: (item: T) => void;
  readonly clock: Clock;
  /** How long a change may hold the others back before it is given up as not coming (a safety net). */
  readonly stallMs?: number;
  readonly logger: Logger;
}

/**
 * Releases the changes a watch's cells send in the order of the resource's history, so that every watch
 * through this router sees them in one order and a watch resumed from a change's version (its place in the
 * history) gets exactly what came after it. A change waits until every change before it in the history is
 * released or known not to be the watch's: its cell's stream went past it, or its namespace, name or labels
 * (before and after) are not what the watch selects. Each cell's items keep their order; what is not a change
 * (a bookmark, an initial event, an error) goes as soon as the cell's earlier items have.
 *
 * A change the history does not hold (from before it, or of a source it does not follow) goes at once; one
 * that holds the others back for `stallMs` (never, unless a cell's stream and the history disagree) is let go
 * with a warning.
 */
export class EventOrder<T> {
  private readonly options: EventOrderOptions<T>;
  private readonly queues = new Map<string, Fifo<CellItem<T>>>();
  private readonly start = new Map<string, number | undefined>();
  /** Per cell, the last version its stream released: the watch has all its changes up to it. */
  private readonly passed = new Map<string, number>();
  private next: number;
  /** What holds the watch back, and since when; what no longer does is dropped after each drain. */
  private waits = new Map<string, number>();
  private seen = new Set<string>();
  private timer: Timer | undefined;
  /** The last change {@link resolveFrom} looked at. */
  private lookedAt = -1;
  private readonly unlisten: () => void;
  private closed = false;

  constructor(options: EventOrderOptions<T>) {
    this.options = options;
    for (const [cell, version] of options.start) this.start.set(cell, version);
    this.next = options.history.firstSeq();
    this.unlisten = options.history.listen(() => this.drain());
  }

  /** A cell the watch reads from `version` on (one that joined while it runs). */
  startAt(cell: string, version: number): void {
    this.start.set(cell, version);
    this.drain();
  }

  /** A cell the watch reads whose start is not known yet (its initial events are coming): held until it is. */
  awaitStart(cell: string): void {
    this.start.set(cell, undefined);
  }

  /** A cell the watch no longer reads (drained): what it sent goes as it came; nothing of it is waited for. */
  forget(cell: string): void {
    this.start.delete(cell);
    this.drain();
  }

  /** Whether `cell`'s changes are released in the history's order (else as they come). */
  orders(cell: string): boolean {
    return this.start.has(cell) && this.options.history.latest(cell) !== undefined;
  }

  /** A change of `cell` at its own `version`. */
  change(cell: string, version: number, item: T): void {
    this.enqueue(cell, { change: version, item });
  }

  /** Anything else of `cell`'s stream; `passes`: the version a bookmark says the stream is at. */
  other(cell: string, item: T, passes?: number): void {
    this.enqueue(cell, passes === undefined ? { item } : { passes, item });
  }

  close(): void {
    this.closed = true;
    this.unlisten();
    this.timer?.cancel();
  }

  private enqueue(cell: string, item: CellItem<T>): void {
    let queue = this.queues.get(cell);
    if (!queue) this.queues.set(cell, (queue = new Fifo()));
    queue.push(item);
    this.drain();
  }

  private drain(): void {
    if (this.closed) return;
    const { history, relevance } = this.options;
    this.seen = new Set();
    for (;;) {
      const moved = this.releaseHeads();
      const entry = history.entry(this.next);
      if (!entry) {
        // A watch that fell behind the history's retention goes on from what it still holds.
        if (this.next < history.firstSeq()) {
          this.next = history.firstSeq();
          continue;
        }
        if (!moved) break;
        continue;
      }
      // Not read by this watch, or no longer followed (its changes come as they come).
      if (!this.orders(entry.source)) {
        this.next += 1;
        continue;
      }
      const start = this.start.get(entry.source);
      // A streaming list's cell: its changes are ordered from where its initial events end.
      if (start === undefined) break;
      const head = this.queues.get(entry.source)?.peek();
      if (entry.version <= start || entry.version <= (this.passed.get(entry.source) ?? -1)) {
        this.next += 1;
        continue;
      }
      if (head?.change === entry.version) {
        this.release(entry.source);
        this.next += 1;
        continue;
      }
      // The cell's stream went past it: not the watch's (its caller's stream is the cell's own judgement).
      if (head?.change !== undefined && head.change > entry.version) {
        this.next += 1;
        continue;
      }
      const relevant = relevance(entry);
      if (relevant === 'no') {
        this.next += 1;
        continue;
      }
      // Whether it matched before is read once for every watch (the history keeps no labels per object);
      // the changes behind it are asked for too, so that a burst is read at once, not one by one.
      if (relevant === 'unknown') this.resolveFrom(entry.seq);
      if (this.stalled(`seq:${entry.seq}`)) {
        this.options.logger.warn(
          { cell: entry.source, object: `${entry.namespace}/${entry.name}`, version: entry.version },
          'watch gave up waiting for a change its cell did not send; later changes go on',
        );
        this.next += 1;
        continue;
      }
      break;
    }
    for (const key of this.waits.keys()) if (!this.seen.has(key)) this.waits.delete(key);
    this.wakeWhenStalled();
  }

  /**
   * Asks the history for the labels before the change at `seq` the watch waits on, and before the unknown
   * changes behind it, a bounded look ahead that an earlier drain's look ahead is not repeated in (the
   * history asks once anyway).
   */
  private resolveFrom(seq: number): void {
    const { history, relevance } = this.options;
    history.resolve(seq);
    for (let ahead = Math.max(seq + 1, this.lookedAt + 1); ahead < seq + LOOK_AHEAD; ahead++) {
      const entry = history.entry(ahead);
      if (!entry) break;
      this.lookedAt = ahead;
      if (entry.previousLabels === undefined && this.orders(entry.source) && relevance(entry) === 'unknown')
        history.resolve(ahead);
    }
  }

  /**
   * Releases each cell's leading items that need no order: anything but a change, and a change the history
   * does not place after where the watch is.
   */
  private releaseHeads(): boolean {
    const { history } = this.options;
    let moved = false;
    for (const [cell, queue] of this.queues) {
      for (let head = queue.peek(); head; head = queue.peek()) {
        if (head.change !== undefined) {
          if (!this.orders(cell)) {
            // Not followed by the history (it stopped), or not by this watch: in the order the cell sent it.
          } else if (head.change > history.latest(cell)!) {
            if (!this.stalled(`ahead:${cell}:${head.change}`)) break;
          } else {
            const seq = history.seqOf(cell, head.change);
            if (seq !== undefined && seq >= this.next) break;
          }
        }
        this.release(cell);
        moved = true;
      }
    }
    return moved;
  }

  private release(cell: string): void {
    const item = this.queues.get(cell)!.shift()!;
    const version = item.change ?? item.passes;
    if (version !== undefined) this.passed.set(cell, Math.max(this.passed.get(cell) ?? -1, version));
    this.options.release(item.item);
  }

  /** Whether the wait `key` (kept while drains keep meeting it) has lasted `stallMs`. */
  private stalled(key: string): boolean {
    const now = this.options.clock.now();
    this.seen.add(key);
    let since = this.waits.get(key);
    if (since === undefined) this.waits.set(key, (since = now));
    return now - since >= this.stallMs();
  }

  /** Wakes the drain when the oldest wait stalls (history changes and cells' items wake it before). */
  private wakeWhenStalled(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.waits.size === 0) return;
    const due = Math.min(...this.waits.values()) + this.stallMs() - this.options.clock.now();
    this.timer = this.options.clock.setTimer(Math.max(0, due), () => this.drain());
  }

  private stallMs(): number {
    return this.options.stallMs ?? 30_000;
  }
}
