import type { GroupVersionResource } from '@cellfed/api';
import {
  CONTROL_PLANE,
  Informer,
  resourceListWatch,
  untilAborted,
  type Clock,
  type KubeClient,
  type Lane,
  type ListWatch,
} from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { type KubeObject } from '@cellfed/federation';

import { mirrorSelector, sameResource } from './shared-objects.ts';

export interface SharedChangesOptions {
  controlPlane: KubeClient;
  logger: Logger;
  registry?: Registry;
  clock?: Clock;
  /** Resources whose objects are kept whole (see {@link SharedChanges.objects}); the rest, metadata only. */
  keepWhole?: (resource: GroupVersionResource) => boolean;
  /** Where each resource's objects come from; the control plane, listed cluster-wide, by default. */
  listWatch?: (resource: GroupVersionResource, whole: boolean) => ListWatch;
}

interface Watched {
  readonly resource: GroupVersionResource;
  readonly controller: AbortController;
  readonly informer: Informer;
}

/**
 * Watches the control plane's objects of every mirrored resource (metadata only), so that a change reaches
 * the cells at once rather than on the next resync: a pod in a cell needs its ServiceAccount (and its
 * Secrets, when the CellSet shares them) before it can start. One informer per resource, started and stopped
 * as the CellSet's shared resources change. The admission policies and bindings are kept whole: the params
 * their bindings name are followed into the cells (see AdmissionParams).
 */
export class SharedChanges {
  private readonly running = new Map<string, Watched>();
  private readonly handlers: ((resource: GroupVersionResource, lane: Lane) => void)[] = [];
  private wanted = new Map<string, GroupVersionResource>();
  private signal: AbortSignal | undefined;

  private readonly options: SharedChangesOptions;

  constructor(options: SharedChangesOptions) {
    this.options = options;
  }

  /**
   * Calls `handler` for every event of a watched resource: lane `high` for a change the control plane makes
   * after the first list, `low` for what the first list (or a relist) finds; `high` when a resource stops
   * being watched (what was cached of it is gone).
   */
  addHandler(handler: (resource: GroupVersionResource, lane: Lane) => void): void {
    this.handlers.push(handler);
  }

  /** The resources to watch from now on. */
  watch(resources: readonly GroupVersionResource[]): void {
    this.wanted = new Map(resources.map((resource) => [nameOf(resource), resource]));
    this.follow();
  }

  /** Which resources are watched now (for tests and logs). */
  watched(): string[] {
    return [...this.running.keys()].sort();
  }

  /**
   * The cached objects of a resource kept whole (any version of its group and resource), as last listed or
   * watched; none if it is not watched.
   */
  objects(resource: GroupVersionResource): readonly Readonly<KubeObject>[] {
    const watched = this.runningOf(resource);
    if (!watched) return [];
    const objects: Readonly<KubeObject>[] = [];
    watched.informer.each((_key, object) => objects.push(object));
    return objects;
  }

  /**
   * Whether what {@link objects} gives for `resource` is complete: it is not among the watched resources, or
   * its informer has listed it.
   */
  synced(resource: GroupVersionResource): boolean {
    if (![...this.wanted.values()].some((wanted) => sameResource(wanted, resource))) return true;
    return this.runningOf(resource)?.informer.hasSynced() ?? false;
  }

  private runningOf(resource: GroupVersionResource): Watched | undefined {
    for (const watched of this.running.values()) if (sameResource(watched.resource, resource)) return watched;
    return undefined;
  }

  /** Runs the informers until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    this.follow();
    await untilAborted(signal);
    for (const { controller } of this.running.values()) controller.abort(signal.reason);
    this.running.clear();
  }

  private follow(): void {
    const signal = this.signal;
    if (!signal || signal.aborted) return;
    for (const [name, { resource, controller }] of this.running) {
      if (this.wanted.has(name)) continue;
      controller.abort(new Error('no longer mirrored'));
      this.running.delete(name);
      // What was cached of it is gone: whoever reads objects() reads again.
      this.changed(resource, 'high');
    }
    for (const [name, resource] of this.wanted) {
      if (this.running.has(name)) continue;
      const controller = new AbortController();
      signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
      const whole = this.options.keepWhole?.(resource) === true;
      const informer = new Informer({
        cell: CONTROL_PLANE,
        resource: name,
        logger: this.options.logger,
        ...(this.options.registry ? { registry: this.options.registry } : {}),
        ...(this.options.clock ? { clock: this.options.clock } : {}),
        listWatch: (this.options.listWatch ?? this.controlPlaneListWatch)(resource, whole),
      });
      this.running.set(name, { resource, controller, informer });
      informer.addHandler((event) => this.changed(resource, event.lane));
      void informer.run(controller.signal);
    }
  }

  private changed(resource: GroupVersionResource, lane: Lane): void {
    for (const handler of this.handlers) handler(resource, lane);
  }

  private readonly controlPlaneListWatch = (resource: GroupVersionResource, whole: boolean): ListWatch => {
    const fieldSelector = mirrorSelector(resource);
    return resourceListWatch(
      this.options.controlPlane,
      { ...resource, namespaced: false },
      { metadataOnly: !whole, ...(fieldSelector ? { fieldSelector } : {}) },
    );
  };
}

function nameOf(resource: GroupVersionResource): string {
  return [resource.group || undefined, resource.version, resource.resource].filter(Boolean).join('/');
}
