import { resourceListWatch, type Clock, type KubeClient } from '@cellfed/controller-kit';
import type { Logger } from 'pino';

import { ownObjectsOnly } from '../collections/own-objects.ts';
import type { CellularResource } from '../routing/cellular-resources.ts';
import { collectionSources, type Placement, type RoutingState } from '../routing/route-plan.ts';
import { feedHistory } from './history-feed.ts';
import { labelsBeforeReader } from './labels-before.ts';
import { ResourceHistory, type ResourceHistoryOptions } from './resource-history.ts';

export interface ResourceHistoriesOptions {
  readonly state: () => RoutingState | undefined;
  /** The router's own client of a live cell, or of the control plane for CONTROL_PLANE_SOURCE. */
  readonly client: (source: string) => KubeClient | undefined;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly history?: ResourceHistoryOptions;
  /** How long the first request of a resource waits for its sources' first lists. */
  readonly firstWaitMs?: number;
}

/** A resource a history is kept of: its group, version and name, and where its objects are placed. */
export interface HistoryResource extends CellularResource {
  readonly version: string;
  readonly placement: Placement;
}

interface Followed {
  readonly history: ResourceHistory;
  readonly resource: HistoryResource;
  /** The routing state its sources were last followed for: only a new one can change them. */
  state?: RoutingState;
  /** Each followed source's feed, stopped when the source leaves the collection's sources. */
  readonly feeds: Map<string, AbortController>;
}

/**
 * The router's histories, one per resource, begun the first time a request of the resource comes (before it
 * is served, so that the version its answer carries is in the history) and kept for the router's life. Each
 * follows the resource's collection sources as they are now: a cell that joins is followed from then on, one
 * that leaves or goes Down is no longer.
 */
export class ResourceHistories {
  private readonly options: ResourceHistoriesOptions;
  private readonly followed = new Map<string, Followed>();
  private readonly stopAll = new AbortController();
  private refresh: ReturnType<typeof setInterval> | undefined;

  constructor(options: ResourceHistoriesOptions) {
    this.options = options;
  }

  /**
   * The history of `resource`, following its sources now. The first call for a resource (or a new source)
   * waits, up to a few seconds, for each new source's first list.
   */
  async of(resource: HistoryResource): Promise<ResourceHistory> {
    const key = `${resource.group}/${resource.resource}`;
    let followed = this.followed.get(key);
    // The hot path (every request of the resource): nothing changed since.
    if (followed && followed.state === this.options.state()) return followed.history;
    if (!followed) {
      const history = new ResourceHistory({
        ...this.options.history,
        labelsBefore: labelsBeforeReader({
          resource,
          client: this.options.client,
          logger: this.options.logger,
          ...(this.options.clock ? { clock: this.options.clock } : {}),
        }),
      });
      followed = { history, resource, feeds: new Map() };
      this.followed.set(key, followed);
      // Cells that join or leave are followed or not within a second.
      this.refresh ??= setInterval(() => {
        for (const each of this.followed.values()) if (each.state !== this.options.state()) this.follow(each);
      }, 1_000).unref();
    }
    const started = this.follow(followed);
    if (started.length > 0) {
      const limit = this.options.firstWaitMs ?? 3_000;
      await Promise.race([
        Promise.all(started),
        new Promise((resolve) => setTimeout(resolve, limit).unref()),
      ]);
    }
    return followed.history;
  }

  /**
   * The history of `resource` if one is kept, as it is: what it follows changes with the CellSet by itself
   * (each second), never because of a request.
   */
  current(resource: HistoryResource): ResourceHistory | undefined {
    return this.followed.get(`${resource.group}/${resource.resource}`)?.history;
  }

  /** Stops every feed. */
  close(): void {
    this.stopAll.abort();
    if (this.refresh) clearInterval(this.refresh);
  }

  /** Starts a feed for each source not followed yet, stops those of sources gone; the new feeds' first lists. */
  private follow(followed: Followed): Promise<boolean>[] {
    const state = this.options.state();
    if (!state) return [];
    const { resource, history, feeds } = followed;
    const sources = collectionSources(state, resource.placement, resource);
    for (const [source, stop] of feeds) {
      if (sources.includes(source)) continue;
      stop.abort();
      feeds.delete(source);
      history.stop(source);
    }
    const started: Promise<boolean>[] = [];
    for (const source of sources) {
      if (feeds.has(source)) continue;
      const client = this.options.client(source);
      if (!client) continue;
      const stop = new AbortController();
      this.stopAll.signal.addEventListener('abort', () => stop.abort(), { once: true });
      let firstAttempt!: (ok: boolean) => void;
      const first = new Promise<boolean>((resolve) => (firstAttempt = resolve));
      const fieldSelector = ownObjectsOnly(resource, resource.placement, source);
      void feedHistory({
        history,
        source,
        listWatch: resourceListWatch(
          client,
          { group: resource.group, version: resource.version, resource: resource.resource, namespaced: true },
          { metadataOnly: true, ...(fieldSelector ? { fieldSelector } : {}) },
        ),
        signal: stop.signal,
        logger: this.options.logger.child({ resource: `${resource.group}/${resource.resource}` }),
        ...(this.options.clock ? { clock: this.options.clock } : {}),
        onFirstAttempt: firstAttempt,
      });
      feeds.set(source, stop);
      started.push(first);
    }
    // Followed for this state once every source is (one not connected yet is tried again next time).
    if (sources.every((source) => feeds.has(source))) followed.state = state;
    return started;
  }
}
