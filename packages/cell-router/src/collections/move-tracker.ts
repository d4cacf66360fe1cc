import { type WatchEvent } from '@cellfed/controller-kit';
import { MIGRATED, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import { madeByItsCell } from '@cellfed/federation';

import type { CellularResource } from '../routing/cellular-resources.ts';
import type { NamespaceLabels, RoutingState } from '../routing/route-plan.ts';
import { CellMadeTracker } from './cell-made-tracker.ts';
import { ownObjectView } from './own-objects.ts';
import { visibleCopy } from './copy-choice.ts';
import { watchedMeta, type ShownEvent, type WatchedObject } from './watched-object.ts';

/** What a tracker needs of its merged watch's request. */
export interface MoveTrackerRequest {
  /** The resource watched: its group and name. */
  readonly resource: CellularResource;
  readonly namespaceLabels: NamespaceLabels;
  /** One copy of an object, as the router reads it, in the watch's own form. */
  readonly readCopy: (cell: string, namespace: string, name: string) => Promise<WatchedObject | undefined>;
}

/** Which cells' events a client sees, and as what. */
export interface WatchVisibility {
  decide(
    cell: string,
    event: WatchEvent,
    state: RoutingState,
  ): Promise<ShownEvent | undefined> | ShownEvent | undefined;
  /** A streaming list's initial events have all been sent: the client has every object there is. */
  initialEventsEnded?(): void;
}

/**
 * What the client sees of one cell's event while objects move: the old copy until it is `migrated`, then
 * the new one (announced by one MODIFIED); the other copies never.
 *
 * It keeps what it knows of an object only while the object moves: a CellSet whose moves have ended (a new
 * routing state in which the object's two cells are one) drops it, and a new copy is held only until the
 * move is announced. So a watch through a rebalance of millions holds what is moving, not what has moved.
 */
export class MoveTracker implements WatchVisibility {
  /** The labels of old copies of moving objects, as last seen (`null`: no old copy). */
  private readonly oldCopies = new Map<string, Record<string, string> | null>();
  /** The latest new copies of moving objects, for the MODIFIED that announces a completed move. */
  private readonly newCopies = new Map<string, WatchedObject>();
  /** Whether the client has each moving object now, from what this watch told it. */
  private readonly shown = new Map<string, boolean>();
  /** The version of the new copy each completed move was announced with: its own event then adds nothing. */
  private readonly announced = new Map<string, string | undefined>();
  /**
   * What cells' controllers made of this resource (a CronJob's Jobs): never moved, shown from where they
   * are wherever the ring puts their names. Once seen so, an object stays so for this watch (orphaned).
   */
  private readonly made: CellMadeTracker;
  private readonly request: MoveTrackerRequest;
  /**
   * Whether the client has an object it was not told of here: yes for a watch after a list; no for a
   * streaming list, whose client starts empty, until its initial events have all been sent.
   */
  private clientHasUntold: boolean;
  /** The routing state the kept keys were last judged by. */
  private judgedBy: RoutingState | undefined;

  constructor(request: MoveTrackerRequest, clientStartsEmpty: boolean) {
    this.request = request;
    this.clientHasUntold = !clientStartsEmpty;
    this.made = new CellMadeTracker(request.resource, request.readCopy);
  }

  initialEventsEnded(): void {
    // What it was not told of here (an object it forgot once its move ended) it has from then on.
    this.clientHasUntold = true;
  }

  async decide(cell: string, event: WatchEvent, state: RoutingState): Promise<ShownEvent | undefined> {
    if (state !== this.judgedBy) this.forgetSettled(state);
    const decided = await this.decideMoving(cell, event, state);
    if (decided.key !== undefined && decided.event)
      this.shown.set(decided.key, decided.event.type !== 'DELETED');
    return decided.event;
  }

  private async decideMoving(
    cell: string,
    event: WatchEvent,
    state: RoutingState,
  ): Promise<{ key?: string; event: ShownEvent | undefined }> {
    const object = event.object as WatchedObject;
    const meta = watchedMeta(object);
    const namespace = meta.namespace ?? '';
    const name = meta.name ?? '';
    const own = ownObjectView(this.request.resource, 'ring', cell, namespace, name);
    if (own !== 'route') return { event: own === 'show' ? event : undefined };
    if (madeByItsCell(meta) || this.made.holds(namespace, name))
      return { event: await this.made.decide(cell, event) };
    const decision = this.decisionOf(state, namespace, name);
    if (decision.oldCell === decision.newCell) {
      return { event: cell === decision.oldCell ? event : undefined };
    }
    const key = `${namespace}/${name}`;
    const answer = (shown: ShownEvent | undefined) => ({ key, event: shown });
    if (cell === decision.oldCell) {
      const before = this.oldCopies.get(key);
      const wasMigrated = before?.[REBALANCE_STATUS_LABEL] === MIGRATED;
      if (event.type === 'DELETED') {
        this.oldCopies.set(key, null);
        // The leftover of a finished move going away is not the object going away.
        return answer(wasMigrated ? undefined : event);
      }
      const labels = meta.labels ?? {};
      this.oldCopies.set(key, labels);
      if (labels[REBALANCE_STATUS_LABEL] !== MIGRATED) return answer(event);
      if (wasMigrated) return answer(undefined);
      // The move completed: the client now sees the new copy, as one MODIFIED (as an ADDED if it never had
      // the object: a streaming list's initial events).
      const has = this.shown.get(key) ?? this.clientHasUntold;
      const fresh =
        this.newCopies.get(key) ??
        (await this.request.readCopy(decision.newCell, namespace, name).catch(() => undefined));
      this.newCopies.delete(key);
      if (!fresh) return answer(has ? { type: 'DELETED', object } : undefined);
      this.announced.set(key, watchedMeta(fresh).resourceVersion);
      return answer({ type: has ? 'MODIFIED' : 'ADDED', object: fresh, source: decision.newCell });
    }
    if (cell !== decision.newCell) return answer(undefined);
    let old = this.oldCopies.get(key);
    // Kept for the MODIFIED that will announce the move; once it is announced, its events speak for it.
    if (event.type === 'DELETED' || old?.[REBALANCE_STATUS_LABEL] === MIGRATED) this.newCopies.delete(key);
    else this.newCopies.set(key, object);
    if (old === undefined) {
      const copy = await this.request.readCopy(decision.oldCell, namespace, name).catch(() => undefined);
      old = copy ? (watchedMeta(copy).labels ?? {}) : null;
      this.oldCopies.set(key, old);
    }
    const visible = visibleCopy(decision, [
      ...(old === null ? [] : [{ cell: decision.oldCell, labels: old, item: undefined }]),
      { cell, labels: meta.labels, item: undefined },
    ]);
    if (visible?.cell !== cell) return answer(undefined);
    if (event.type !== 'DELETED' && this.announced.get(key) === meta.resourceVersion)
      return answer(undefined);
    // Its first event from the new cell: a client that had the object from the old cell sees a change, never
    // an ADDED for an object it already has.
    const has = this.shown.get(key) ?? (this.clientHasUntold && old !== null);
    return answer(event.type === 'ADDED' && has ? { ...event, type: 'MODIFIED' } : event);
  }

  /** How many objects it keeps something of, and how many whole copies (for its spec). */
  kept(): { objects: number; copies: number } {
    const keys = [this.oldCopies, this.newCopies, this.shown, this.announced].flatMap((map) => [
      ...map.keys(),
    ]);
    return { objects: new Set(keys).size, copies: this.newCopies.size };
  }

  /** Drops what it keeps of objects no longer moving under `state` (their one cell shows them as it is). */
  private forgetSettled(state: RoutingState): void {
    this.judgedBy = state;
    const maps = [this.oldCopies, this.newCopies, this.shown, this.announced];
    // Each kept object routed once, whichever maps hold it.
    for (const key of new Set(maps.flatMap((map) => [...map.keys()]))) {
      const slash = key.indexOf('/');
      const decision = this.decisionOf(state, key.slice(0, slash), key.slice(slash + 1));
      if (decision.oldCell === decision.newCell) for (const map of maps) map.delete(key);
    }
  }

  /** Where the routing rule of `state` has `namespace/name`: its old and new cell. */
  private decisionOf(state: RoutingState, namespace: string, name: string) {
    return state.table.route(state.table.keyOf({ namespace, name }, this.request.namespaceLabels(namespace)));
  }
}
