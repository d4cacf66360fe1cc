import type { GroupVersionResource } from '@cellfed/api';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  resourceName,
  type KubeObject,
  type ObjectMeta,
  formatObjectKey,
  type CellularObjectRef,
  NOT_FOLLOWER_SELECTOR,
} from '@cellfed/federation';

import type { CellAware, EngagedCell } from '../cells/cell-pool.ts';
import { Informer } from '../informer/informer.ts';
import { resourceListWatch } from '../informer/list-watch.ts';
import type { Lane } from '../queue/lane.ts';
import { lookupKey, parseKey } from '../object-key.ts';

/** What controllers read about the copies of cellular objects in the cells. */
export interface CopiesView {
  /** The cached metadata of each engaged cell's copy of the object, by cell id: read it, never change it. */
  copiesOf(ref: CellularObjectRef): ReadonlyMap<string, Readonly<ObjectMeta>>;
  /** Visits every cached copy of every cellular object in every engaged cell, without copying it. */
  eachCopy(visit: (cell: string, ref: CellularObjectRef, metadata: Readonly<ObjectMeta>) => void): void;
  /** Whether every cellular resource of each of these cells is engaged and listed. */
  synced(cells: readonly string[]): boolean;
}

interface CellInformers {
  readonly resources: readonly GroupVersionResource[];
  readonly informers: Map<string, Informer>;
  readonly abort: AbortController;
}

export interface CellObjectsOptions {
  /**
   * Cache names, labels and annotations only (PartialObjectMetadata): enough to decide, a third of the
   * memory. Otherwise whole objects (without managed fields), for controllers that copy every change.
   */
  metadataOnly: boolean;
  /**
   * Whole objects with their managed fields (dropped by default: no controller reads them), for the backup
   * controller: a backup carries them, so that a promoted object keeps its field managers.
   */
  keepManagedFields?: boolean;
  logger: Logger;
  registry: Registry;
  /** The cellular resources as the CellSet lists them now. */
  resources: () => readonly GroupVersionResource[];
}

/**
 * A cache of every cellular object in every engaged cell (one informer set per member, started and stopped
 * with it: docs/design.md, [T2]), metadata only or whole objects. Keys name objects, not cells (see
 * object-ref.ts), so a change in any cell queues the one key of the object.
 */
export class CellObjects implements CellAware, CopiesView {
  private readonly options: CellObjectsOptions;
  private readonly cells = new Map<string, { cell: EngagedCell; informers: CellInformers }>();
  private readonly handlers: ((key: string, lane: Lane, cell: string) => void)[] = [];

  constructor(options: CellObjectsOptions) {
    this.options = options;
  }

  /** Calls `handler` with an object's key whenever one of its copies changes in any cell, and that cell. */
  addHandler(handler: (key: string, lane: Lane, cell: string) => void): void {
    this.handlers.push(handler);
  }

  engage(cell: EngagedCell): void {
    this.start(cell);
    cell.signal.addEventListener(
      'abort',
      () => {
        if (this.cells.get(cell.id)?.cell === cell) this.cells.delete(cell.id);
      },
      { once: true },
    );
  }

  /** Restarts the informers of every cell whose cellular resources are not the CellSet's any more. */
  resourcesChanged(): void {
    const wanted = this.options.resources().map(resourceName).sort().join(',');
    for (const { cell, informers } of this.cells.values()) {
      if (informers.resources.map(resourceName).sort().join(',') === wanted) continue;
      informers.abort.abort(new Error('cellular resources changed'));
      this.start(cell);
    }
  }

  copiesOf(ref: CellularObjectRef): Map<string, Readonly<ObjectMeta>> {
    const found = new Map<string, Readonly<ObjectMeta>>();
    const id = resourceName(ref.resource);
    for (const [cellId, { informers }] of this.cells) {
      const key = lookupKey(cellId, ref.namespace, ref.name);
      const object = key === undefined ? undefined : informers.informers.get(id)?.peek(key);
      if (object) found.set(cellId, object.metadata);
    }
    return found;
  }

  /** The cached object in `cell` (metadata only when so configured): read it, never change it. */
  objectIn(cell: string, ref: CellularObjectRef): Readonly<KubeObject> | undefined {
    const key = lookupKey(cell, ref.namespace, ref.name);
    if (key === undefined) return undefined;
    return this.cells.get(cell)?.informers.informers.get(resourceName(ref.resource))?.peek(key);
  }

  eachCopy(visit: (cell: string, ref: CellularObjectRef, metadata: Readonly<ObjectMeta>) => void): void {
    for (const [cellId, { informers }] of this.cells) {
      for (const resource of informers.resources) {
        informers.informers.get(resourceName(resource))?.each((_key, object) => {
          const metadata = object.metadata;
          visit(
            cellId,
            { resource, namespace: metadata.namespace ?? '', name: metadata.name ?? '' },
            metadata,
          );
        });
      }
    }
  }

  synced(cells: readonly string[]): boolean {
    return cells.every((id) => {
      const entry = this.cells.get(id);
      return entry !== undefined && [...entry.informers.informers.values()].every((i) => i.hasSynced());
    });
  }

  private start(cell: EngagedCell): void {
    const abort = new AbortController();
    const signal = AbortSignal.any([cell.signal, abort.signal]);
    const resources = [...this.options.resources()];
    const informers = new Map<string, Informer>();
    for (const resource of resources) {
      const informer = new Informer({
        cell: cell.id,
        resource: resourceName(resource),
        listWatch: resourceListWatch(
          cell.client,
          { ...resource, namespaced: true },
          // Follower copies are a cell's own, never the object (see pod-references.ts).
          { metadataOnly: this.options.metadataOnly, labelSelector: NOT_FOLLOWER_SELECTOR },
        ),
        logger: this.options.logger,
        registry: this.options.registry,
        ...(this.options.keepManagedFields && !this.options.metadataOnly
          ? { transform: (object: KubeObject) => object }
          : {}),
      });
      informer.addHandler((event) => {
        const { namespace, name } = parseKey(event.key);
        const key = formatObjectKey({ resource, namespace, name });
        for (const handler of this.handlers) handler(key, event.lane, cell.id);
      });
      informers.set(resourceName(resource), informer);
      void informer.run(signal);
    }
    this.cells.set(cell.id, { cell, informers: { resources, informers, abort } });
  }
}
