import { errorMessage, realClock, sleep, type Clock, type WatchEvent } from '@cellfed/controller-kit';
import type { Logger } from 'pino';

import {
  collectionSources,
  type NamespaceLabels,
  type Placement,
  type RoutingState,
} from '../routing/route-plan.ts';
import { cellFailure, failure, parseStatus, type KubeStatus } from '../status/kube-status.ts';
import { encodeCellVersions } from './cell-versions.ts';
import type { CollectionOutcome, StreamedAnswer } from './streamed-answer.ts';
import { creationColumns, type CreationColumns } from '../views/client-view.ts';
import { isProtobufObject } from './protobuf-watch.ts';
import { INITIAL_EVENTS_END, JSON_WATCH, type WatchCodec } from './watch-codec.ts';
import type { CellularResource } from '../routing/cellular-resources.ts';
import { CellMadeTracker } from './cell-made-tracker.ts';
import { MoveTracker, type WatchVisibility } from './move-tracker.ts';
import type { OwnerUids } from '../views/owner-uids.ts';
import { alsoMadeByCells, CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { watchedMeta, type WatchedObject } from './watched-object.ts';
import type { ResourceHistory } from '../history/resource-history.ts';
import { isExactScope, watchScope } from '../history/watch-scope.ts';
import { EventOrder } from './event-order.ts';
import { shownVersion } from './source-versions.ts';
import { resolveCollectionStart } from './watch-start.ts';
import { withRequirement } from '../request/selector-terms.ts';
import { queryBool } from '../request/query-bool.ts';
import { parseRequestInfo } from '../request/request-info.ts';
import { ownObjectsOnly } from './own-objects.ts';
import { DEFAULT_WATCH_BUFFER, WatchBuffer, type WatchBufferLimits } from './watch-buffer.ts';

/**
 * What a cell's watch reads ahead of its merging: a watch whose client is slow waits with this much unread
 * per cell (besides its own buffer), 1,000 such watches of 3 cells 46 MiB; undici’s 64 KiB cost about 150 MiB
 * more RSS in the router flood proof.
 */
const CELL_READ_AHEAD_BYTES = 16 * 1024;

/** What the merged watch needs of a cell's client (KubeClient.raw): a streaming GET. */
export interface CellWatcher {
  raw(
    method: 'GET',
    target: string,
    options: { headers: Record<string, string | string[]>; signal: AbortSignal; highWaterMark: number },
  ): Promise<{ statusCode: number; body: AsyncIterable<Buffer> }>;
}

export interface MergedWatchRequest {
  /** The routing state now (cells may be added while the watch runs). */
  readonly state: () => RoutingState | undefined;
  readonly namespaceLabels: NamespaceLabels;
  readonly client: (cell: string) => CellWatcher | undefined;
  readonly target: string;
  readonly headers: Record<string, string | string[]>;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** The resource watched: its group and name. */
  readonly resource: CellularResource;
  /** Owner uids of cell-made objects as clients know them (see OwnerUids); as stored without. */
  readonly ownerUids?: OwnerUids;
  /** Placed by the ring (the default), or cell-made: watched in the control plane too, never filtered by the ring. */
  readonly placement?: Placement;
  /**
   * One copy of an object, as the router reads it (for a moving object whose other copy it has not seen), in
   * the watch's own form: a Table row's Table for `kubectl get -w`.
   */
  readonly readCopy: (cell: string, namespace: string, name: string) => Promise<WatchedObject | undefined>;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** JSON lines (the default), or protobuf frames for a client that accepts nothing else. */
  readonly codec?: WatchCodec;
  /**
   * The resource's history in this router: with it, a watch whose every cell it follows (and whose selectors
   * it can judge) gets the cells' changes in the history's order, each with its object version's one
   * resourceVersion, and may start from such a version. Without it: arrival order, composite versions.
   */
  readonly history?: ResourceHistory;
  /** Makes the history follow cells that joined (called before a joined cell's watch opens). */
  readonly followSources?: () => Promise<unknown>;
  /** What the watch holds for its client at most (collections/watch-buffer.ts); a default of 8 MiB. */
  readonly buffer?: WatchBufferLimits;
}

/** A cell's event, with the cell's version it gives (none for a streaming list's initial objects). */
type CellEvent =
  | { cell: string; event: WatchEvent; resourceVersion: string | undefined; bytes?: number }
  | { cell: string; closed: KubeStatus }
  /** The cell was drained and left the CellSet: after its last event, the watch goes on without it. */
  | { cell: string; drained: true };

const CONTROL_PARAMS = ['resourceVersion', 'resourceVersionMatch', 'watch', 'sendInitialEvents'];

/**
 * A WATCH of a cellular resource across cells: one upstream watch per cell, resumed from its part of the
 * client's composite resourceVersion, merged into one stream whose every event carries the composite
 * version of all cells so far. An object shows from the copy the routing rule reads: the in-progress copy
 * in the new cell is invisible; when the old copy turns `migrated` the client sees one MODIFIED with the
 * new copy, never a DELETED; the leftover old copy and its deletion are invisible. A cell's watch that
 * ends or fails is resumed from its last version without disturbing the others; a cell that joins gets
 * its own watch; a version a cell no longer has ends the stream with 410, as kube-apiserver does.
 */
export async function serveMergedWatch(
  request: MergedWatchRequest,
  out: StreamedAnswer,
): Promise<CollectionOutcome> {
  const clock = request.clock ?? realClock;
  const codec = request.codec ?? JSON_WATCH;
  const url = new URL(request.target, 'http://router.invalid');
  const params = url.searchParams;
  const query = new URLSearchParams(params);
  for (const name of CONTROL_PARAMS) query.delete(name);
  const rv = params.get('resourceVersion') ?? '';
  const bookmarks = queryBool(params.get('allowWatchBookmarks'));
  // A streaming list (client-go's default since 0.35): every cell sends its objects as ADDED, then a BOOKMARK
  // ending them; the client gets the merged objects and one such BOOKMARK, once every cell has ended its own.
  const streamingList = queryBool(params.get('sendInitialEvents'));
  const rvMatch = params.get('resourceVersionMatch');
  /** Cells whose initial events are not all in yet. */
  const initialPending = new Set<string>();
  const timeoutSeconds = Number(params.get('timeoutSeconds') ?? 0);

  const stop = new AbortController();
  request.signal.addEventListener('abort', () => stop.abort(), { once: true });
  // What the client has yet to be sent, bounded: a client that reads slowly holds its cells' readers back.
  const queue = new WatchBuffer<CellEvent>(request.buffer ?? DEFAULT_WATCH_BUFFER, clock);
  const push = (item: CellEvent) => {
    // Once the watch is over nothing more is held (what is left is given back on the way out).
    if (!stop.signal.aborted) queue.push(item, 'bytes' in item ? (item.bytes ?? 0) : 0);
  };
  const watching = new Set<string>();
  /** Per cell, the last routing state that had it in the CellSet: a drained cell's last events are judged by it. */
  const lastWith = new Map<string, RoutingState>();
  /** Cells let go after a drain whose marker the client's queue has not reached yet. */
  const letGo = new Set<string>();
  /** Each cell's own stop: a drained cell's watch ends alone. */
  const cellStops = new Map<string, AbortController>();
  const cellSignal = (cell: string) => {
    let own = cellStops.get(cell);
    if (!own) cellStops.set(cell, (own = new AbortController()));
    return AbortSignal.any([stop.signal, own.signal]);
  };

  /**
   * Opens one cell's watch from `from` (the cell's own version); resolves with the first answer's status.
   * `initialEvents`: as a streaming list (the cell validates the client's parameters as it would its own).
   */
  const open = async (cell: string, from: string | undefined, initialEvents = false) => {
    const client = request.client(cell);
    if (!client) return { code: 503, text: `cell ${cell} is not connected` };
    const q = new URLSearchParams(query);
    q.set('watch', '1');
    // Of a ring-placed resource the control plane holds nothing clients see but what it makes for itself:
    // only that is asked for (its other objects would hold the watch's order back for nothing).
    const own = ownObjectsOnly(request.resource, placement, cell);
    if (own !== undefined) q.set('fieldSelector', withRequirement(q.get('fieldSelector'), own));
    if (from !== undefined) q.set('resourceVersion', from);
    if (initialEvents) {
      q.set('sendInitialEvents', 'true');
      // A watch from now gets what the cell holds first as a streaming list's initial events, which end
      // with a BOOKMARK saying where (kube-apiserver requires bookmarks for it).
      q.set('resourceVersionMatch', rvMatch ?? 'NotOlderThan');
      q.set('allowWatchBookmarks', 'true');
    }
    const response = await client.raw('GET', `${url.pathname}?${q}`, {
      headers: request.headers,
      signal: cellSignal(cell),
      highWaterMark: CELL_READ_AHEAD_BYTES,
    });
    if (response.statusCode !== 200) {
      const chunks: Buffer[] = [];
      for await (const chunk of response.body) chunks.push(Buffer.from(chunk));
      return { code: response.statusCode, text: codec.statusText(Buffer.concat(chunks)) };
    }
    return { code: 200, body: response.body };
  };

  /**
   * Streams a cell's events into the queue; reopens from the last version the cell sent until the watch
   * stops. Both are judged here, where the cell's events arrive, not when the client has been sent them
   * (the queue may hold many): the version to resume from, and whether a streaming list (`initialEvents`,
   * opened at `from`) is still before its closing BOOKMARK, where it cannot be resumed.
   */
  const follow = async (
    cell: string,
    first: AsyncIterable<Buffer>,
    from: string | undefined,
    initialEvents: boolean,
  ) => {
    let body: AsyncIterable<Buffer> | undefined = first;
    let lastRv = from;
    let midInitialEvents = initialEvents;
    let delayMs = 500;
    const signal = cellSignal(cell);
    while (!signal.aborted) {
      let failed: unknown;
      try {
        if (!body) {
          const answer = await open(cell, lastRv);
          if (answer.code === 410) {
            deliver({ cell, closed: gone(cell, parseStatus(answer.text)?.message) });
            return;
          }
          if (answer.code !== 200)
            throw new Error(`cell ${cell} answered ${answer.code}: ${answer.text?.slice(0, 200)}`);
          body = answer.body;
        }
        const counted = countedBytes(body!);
        let before = 0;
        for await (const event of codec.events(counted.chunks)) {
          // Its size as it came: what the client's buffer holds it at.
          const bytes = counted.total() - before;
          before = counted.total();
          if (queue.full) {
            // Ended only once live: a streaming list's initial events are waited for, however slowly read.
            const room = await queue.room(stop.signal, initialEventsEnded);
            if (room === 'stalled') {
              request.logger.warn(
                { cell, heldBytes: queue.held },
                'watch ended: its client took nothing from a full buffer; it resumes from its last event',
              );
              stop.abort();
              out.cut?.();
              return;
            }
            if (signal.aborted) return; // let go while it waited: nothing of it after its marker
          }
          // Initial events carry each object's own version, in no order: the closing BOOKMARK's counts.
          const rv = watchedMeta(event.object as WatchedObject).resourceVersion;
          const resourceVersion = rv && (!midInitialEvents || event.type === 'BOOKMARK') ? rv : undefined;
          if (
            resourceVersion !== undefined &&
            (lastRv === undefined || Number(resourceVersion) > Number(lastRv))
          )
            lastRv = resourceVersion;
          if (event.type === 'BOOKMARK' && isInitialEventsEnd(event.object)) midInitialEvents = false;
          deliver({ cell, event, resourceVersion, bytes });
          delayMs = 500;
        }
      } catch (error) {
        if (signal.aborted) return;
        failed = error ?? new Error('watch failed');
      }
      if (signal.aborted) return;
      body = undefined;
      // Resuming mid-way through its initial events would lose or repeat objects: the client starts again.
      if (midInitialEvents) {
        deliver({ cell, closed: initialEventsCut(cell) });
        return;
      }
      if (failed === undefined) continue; // the cell ended its watch (its own timeout): resume
      request.logger.warn(
        { cell, err: errorMessage(failed), retryInMs: delayMs },
        'cell watch failed; resuming',
      );
      await sleep(clock, delayMs, signal);
      delayMs = Math.min(delayMs * 2, 30_000);
    }
  };

  // Every cell's watch is opened before the client's stream starts: a refusal is the client's answer.
  const state = request.state();
  if (!state) return { code: 503, status: failure(503, 'ServiceUnavailable', 'no CellSet loaded') };
  const startRv = rv === '0' ? '0' : undefined;
  const placement = request.placement ?? 'ring';
  const cells = [...collectionSources(state, placement, request.resource)];
  const { history } = request;
  const start = await resolveCollectionStart(rv, cells, history, clock, request.signal);
  if (start.kind === 'refused') return { code: start.status.code, status: start.status };
  const versions = start.kind === 'cut' ? start.versions : new Map<string, string>();
  // Resumed from a version that names a cell no longer among the sources (drained, or Down): what the client
  // holds from it would never be deleted, and whether the version saw the cell's last changes is not known
  // here. (A watch open when a cell drained away lets it go instead: see the join timer.)
  const left = [...versions.keys()].find((cell) => !cells.includes(cell));
  if (left !== undefined) {
    const status = leftTheSources(left);
    return { code: status.code, status };
  }
  // One source's own order is the order: its events carry their object versions, a start from one is exact.
  const single = cells.length === 1;
  // Several: in the history's order when it follows every cell and can tell which changes are the watch's.
  const ordered =
    !single &&
    history !== undefined &&
    start.kind !== 'any' &&
    isExactScope(params) &&
    cells.every((cell) => history.latest(cell) !== undefined);
  // A watch from now (of a cell the start does not name) gets what the cell holds as ADDED first, as from one
  // apiserver; in the history's order, asked of the cell as a streaming list, whose closing BOOKMARK says
  // where in the cell's history its changes start.
  const initialEvents = (cell: string) => streamingList || (ordered && !versions.has(cell));
  const orderStart = (cell: string): number | undefined =>
    initialEvents(cell) ? undefined : Number(versions.get(cell));
  const order = ordered
    ? new EventOrder<CellEvent>({
        history,
        relevance: watchScope(watchedNamespace(request.target), params),
        start: new Map(cells.map((cell) => [cell, orderStart(cell)] as const)),
        release: push,
        clock,
        logger: request.logger,
      })
    : undefined;
  /** A cell's item, into the order (or straight to the client's queue without one). */
  const deliver = (item: CellEvent) => {
    if (!order) return push(item);
    if (!('event' in item) || item.event.type === 'ERROR') return order.other(item.cell, item);
    const { cell, event, resourceVersion } = item;
    if (resourceVersion === undefined) return order.other(cell, item);
    if (event.type !== 'BOOKMARK') return order.change(cell, Number(resourceVersion), item);
    if (isInitialEventsEnd(event.object)) order.startAt(cell, Number(resourceVersion));
    order.other(cell, item, Number(resourceVersion));
  };
  const from = cells.map((cell) => versions.get(cell) ?? startRv);
  const opened = await Promise.all(cells.map((cell, i) => open(cell, from[i], initialEvents(cell))));
  const refused = opened.findIndex((answer) => answer.code !== 200);
  if (refused >= 0) {
    stop.abort();
    order?.close();
    const answer = opened[refused]!;
    return { code: answer.code, status: cellFailure(cells[refused]!, answer.code, answer.text ?? '') };
  }
  out.start(200);
  for (const cell of cells) if (initialEvents(cell)) initialPending.add(cell);
  let initialEventsEnded = initialPending.size === 0;
  cells.forEach((cell, i) => {
    watching.add(cell);
    lastWith.set(cell, state);
    void follow(cell, opened[i]!.body!, from[i], initialEvents(cell));
  });

  // Cells that join while the client watches get a watch of their own (from now: they start empty). A cell
  // drained out of the CellSet (see drainedAway) is read for one more second, its events judged by the last
  // routing state that had it, then let go: what the client has of it was shown from the cells it moved
  // to, and nobody lists again. One that leaves otherwise (Down; what cells make; a drain whose last events
  // a full buffer still holds back) ends the watch: what the client holds from it would never be deleted,
  // since its deletions are seen nowhere else, and a new list shows the sources as they are now.
  const leaving = new Set<string>();
  const joinTimer = setInterval(() => {
    const now = request.state();
    if (!now) return;
    const sources = collectionSources(now, placement, request.resource);
    for (const cell of watching) if (inCellSet(now, cell)) lastWith.set(cell, now);
    for (const cell of [...watching].filter((one) => !sources.includes(one))) {
      const drained = drainedAway(lastWith.get(cell), now, placement, request.resource, cell);
      if (drained && !leaving.has(cell)) {
        leaving.add(cell);
        continue;
      }
      if (drained && !queue.full) {
        leaving.delete(cell);
        watching.delete(cell);
        cellStops.get(cell)?.abort();
        cellStops.delete(cell);
        letGo.add(cell);
        deliver({ cell, drained: true });
        order?.forget(cell);
        continue;
      }
      // Ahead of any event the order still holds: the client lists again anyway.
      push({ cell, closed: leftTheSources(cell) });
      return;
    }
    for (const cell of sources) {
      if (watching.has(cell)) continue;
      watching.add(cell);
      lastWith.set(cell, now);
      void (async () => {
        // What it holds comes as ADDED first (a streaming list's initial events); in the history's order,
        // its changes after them, once the history follows it (the watch's cells let its caller watch).
        await request.followSources?.();
        if (!watching.has(cell)) return; // left again meanwhile
        const from = versions.get(cell);
        const joinedInitial =
          order !== undefined && from === undefined && history?.latest(cell) !== undefined;
        if (order && from !== undefined) order.startAt(cell, Number(from));
        else if (joinedInitial) order!.awaitStart(cell);
        const answer = await open(cell, from, joinedInitial);
        if (answer.code === 200) void follow(cell, answer.body!, from, joinedInitial);
        else deliver({ cell, closed: cellFailure(cell, answer.code, answer.text ?? '') });
      })().catch((error: unknown) => {
        // Unless the watch ended or the cell was let go meanwhile: the client's error.
        if (!stop.signal.aborted && watching.has(cell))
          deliver({ cell, closed: cellFailure(cell, 503, errorMessage(error)) });
      });
    }
  }, 1000);
  const timeout = timeoutSeconds > 0 ? setTimeout(() => stop.abort(), timeoutSeconds * 1000) : undefined;

  const tracker: WatchVisibility =
    placement === 'anywhere'
      ? new CellMadeTracker(request.resource, request.readCopy)
      : new MoveTracker(request, streamingList);
  let columns: CreationColumns | undefined;
  // The composite of every cell's version so far, encoded again only when one changes (a streaming list's
  // initial events, thousands of them, change none).
  let composite: string | undefined;
  const compositeVersion = () => (composite ??= encodeCellVersions(versions));
  try {
    while (!stop.signal.aborted) {
      const item = queue.shift();
      if (!item) {
        // The client has every event so far before the watch waits for the next (events that came
        // while flushing are taken first).
        await out.flush();
        if (queue.length > 0) continue;
        await queue.nextItem(stop.signal);
        continue;
      }
      if ('closed' in item) {
        await out.write(codec.frame({ type: 'ERROR', object: item.closed }));
        break;
      }
      if ('drained' in item) {
        letGo.delete(item.cell);
        // A streaming list still waiting for its initial events: they will never end.
        if (initialPending.has(item.cell)) {
          await out.write(codec.frame({ type: 'ERROR', object: initialEventsCut(item.cell) }));
          break;
        }
        // Versions from now on name it no more (unless it joined again meanwhile).
        if (!watching.has(item.cell) && versions.delete(item.cell)) composite = undefined;
        continue;
      }
      const { cell, event } = item;
      if (event.type === 'ERROR') {
        const status = event.object as KubeStatus;
        await out.write(
          codec.frame({ type: 'ERROR', object: status.code === 410 ? gone(cell, status.message) : status }),
        );
        break;
      }
      if (
        item.resourceVersion !== undefined &&
        !letGo.has(cell) &&
        versions.get(cell) !== item.resourceVersion
      ) {
        versions.set(cell, item.resourceVersion);
        composite = undefined;
      }
      if (event.type === 'BOOKMARK' && !initialEventsEnded) {
        if (isInitialEventsEnd(event.object)) initialPending.delete(cell);
        if (initialPending.size > 0) continue;
        initialEventsEnded = true;
        tracker.initialEventsEnded?.();
        // A watch from now asked the cells for their initial events itself: its client gets none such.
        if (!streamingList) continue;
        await out.write(
          codec.frame({
            type: 'BOOKMARK',
            object: codec.bookmark(event.object, compositeVersion(), true),
          }),
        );
        continue;
      }
      if (event.type === 'BOOKMARK') {
        if (bookmarks)
          await out.write(
            codec.frame({
              type: 'BOOKMARK',
              object: codec.bookmark(event.object, compositeVersion(), false),
            }),
          );
        continue;
      }
      // A cell that left the CellSet by a drain: its last events as the last state that had it saw them.
      const current = request.state() ?? state;
      const judgedBy = inCellSet(current, cell) ? current : (lastWith.get(cell) ?? current);
      const shown = await tracker.decide(cell, event, judgedBy);
      if (!shown) continue;
      // A Table watch defines its columns in a cell's first event only; the later ones need them too.
      columns =
        creationColumns((shown.object as { columnDefinitions?: unknown }).columnDefinitions) ?? columns;
      // In the history's order an event carries its object version's own resourceVersion, which a watch
      // resumes from exactly (the history places it); otherwise the composite of every cell so far.
      const own =
        single || order?.orders(cell)
          ? watchedMeta(event.object as WatchedObject).resourceVersion
          : undefined;
      const version = (own !== undefined ? shownVersion(cell, own) : undefined) ?? compositeVersion();
      const object = codec.shown(shown.object as WatchedObject, version, {
        copies: placement !== 'anywhere',
        ...(columns ? { columns } : {}),
      });
      // A copy shown for another source's event (a move completing, a cell-made copy gone) is that source's.
      const holder = shown.source ?? cell;
      if (request.ownerUids && holder !== CONTROL_PLANE_SOURCE && !isProtobufObject(object))
        await request.ownerUids.show(holder, object);
      await out.write(codec.frame({ type: shown.type, object }));
    }
  } finally {
    stop.abort();
    order?.close();
    // What was never sent goes back to the router's budget.
    while (queue.shift() !== undefined);
    clearInterval(joinTimer);
    if (timeout) clearTimeout(timeout);
    out.end();
  }
  return { code: 200 };
}

/** The namespace a collection's target names, as kube-apiserver reads its path; '' for all namespaces. */
function watchedNamespace(target: string): string {
  const info = parseRequestInfo('GET', target);
  return info.isResourceRequest ? info.namespace : '';
}

function isInitialEventsEnd(object: unknown): boolean {
  const annotations = (object as { metadata?: { annotations?: Record<string, string> } }).metadata
    ?.annotations;
  return annotations?.[INITIAL_EVENTS_END] === 'true';
}

function initialEventsCut(cell: string): KubeStatus {
  return failure(
    410,
    'Expired',
    `cell ${cell}: its watch ended before its initial events did; list and watch again`,
  );
}

/** Whether `cell` is one of the CellSet's cells in `state` (the control plane always is). */
function inCellSet(state: RoutingState, cell: string): boolean {
  return cell === CONTROL_PLANE_SOURCE || state.spec.cells.some((one) => one.id === cell);
}

/**
 * Whether `cell`, no longer a source, was drained away: the last state that had it had it `Draining`, and it
 * is no longer in the CellSet (a drain ends only once everything of it moved). Only for what the ring places
 * and only the ring: what cells make (a CronJob's Jobs, a StatefulSet's claims) stays where it was made.
 */
function drainedAway(
  last: RoutingState | undefined,
  now: RoutingState,
  placement: Placement,
  resource: CellularResource,
  cell: string,
): boolean {
  return (
    placement === 'ring' &&
    !alsoMadeByCells(resource.group, resource.resource) &&
    !inCellSet(now, cell) &&
    last?.spec.cells.find((one) => one.id === cell)?.state === 'Draining'
  );
}

function leftTheSources(cell: string): KubeStatus {
  return failure(410, 'Expired', `cell ${cell} has left the federation's sources; list and watch again`);
}

function gone(cell: string, message: string | undefined): KubeStatus {
  return failure(410, 'Expired', `cell ${cell}: ${message ?? 'too old resource version'}`);
}

/** A cell's watch body, counting the bytes read off it so far. */
function countedBytes(body: AsyncIterable<Buffer>): { chunks: AsyncIterable<Buffer>; total: () => number } {
  let total = 0;
  return {
    chunks: (async function* () {
      for await (const chunk of body) {
        total += chunk.length;
        yield chunk;
      }
    })(),
    total: () => total,
  };
}
