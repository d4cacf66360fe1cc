import {
  Informer,
  resourceListWatch,
  type CellAware,
  type EngagedCell,
  type Lane,
  type ObjectMeta,
} from '@cellfed/controller-kit';
import type { GroupVersionResource } from '@cellfed/hashing';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

import { formatObjectKey, resourceName, type ObjectRef } from './object-ref.ts';

/** What the migration and status code read about the objects in the cells. */
export interface CopiesView {
  /** Every copy of the object, in every engaged cell, from the caches. */
  /** The cached metadata of each cell's copy, by cell id: read it, never change it. */
  copiesOf(ref: ObjectRef): ReadonlyMap<string, Readonly<ObjectMeta>>;
  /** Visits every cached copy of every cellular object in every engaged cell, without copying it. */
  eachCopy(visit: (cell: string, ref: ObjectRef, metadata: Readonly<ObjectMeta>) => void): void;
  /** Whether every cellular resource of each of these cells is engaged and listed. */
  synced(cells: readonly string[]): boolean;
}

interface CellInformers {
  readonly resources: readonly GroupVersionResource[];
  readonly informers: Map<string, Informer>;
  readonly abort: AbortController;
}

export interface CellObjectsOptions {
  logger: Logger;
  registry: Registry;
  /** The cellular resources as the CellSet lists them now. */
  resources: () => readonly GroupVersionResource[];
  /** Called with an object's key whenever one of its copies changes in any cell. */
  onChange: (key: string, lane: Lane) => void;
}

/**
 * A metadata-only cache of every cellular object in every engaged cell (seed 000: one informer set per
 * member, started and stopped with it). Labels and annotations are all the migration needs to decide; it
 * reads full objects only for the objects it copies.
 */
export class CellObjects implements CellAware, CopiesView {
  private readonly options: CellObjectsOptions;
  private readonly cells = new Map<string, { cell: EngagedCell; informers: CellInformers }>();

  constructor(options: CellObjectsOptions) {
    this.options = options;
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

  copiesOf(ref: ObjectRef): Map<string, Readonly<ObjectMeta>> {
    const found = new Map<string, Readonly<ObjectMeta>>();
    const id = resourceName(ref.resource);
    for (const [cellId, { informers }] of this.cells) {
      const object = informers.informers.get(id)?.peek(`${cellId}/${ref.namespace}/${ref.name}`);
      if (object) found.set(cellId, object.metadata);
    }
    return found;
  }

  eachCopy(visit: (cell: string, ref: ObjectRef, metadata: Readonly<ObjectMeta>) => void): void {
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
        listWatch: resourceListWatch(cell.client, { ...resource, namespaced: true }, { metadataOnly: true }),
        logger: this.options.logger,
        registry: this.options.registry,
      });
      informer.addHandler((event) => {
        const [, namespace = '', name = ''] = event.key.split('/');
        this.options.onChange(formatObjectKey({ resource, namespace, name }), event.lane);
      });
      informers.set(resourceName(resource), informer);
      void informer.run(signal);
    }
    this.cells.set(cell.id, { cell, informers: { resources, informers, abort } });
  }
}
