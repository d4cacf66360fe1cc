import {
  CONTROL_PLANE,
  Controller,
  Informer,
  formatKey,
  parseKey,
  resourceListWatch,
  type CellPool,
  type KubeClient,
  type Lane,
  type ListWatch,
  type Reconciler,
} from '@cellfed/controller-kit';
import { resourceId, type ResourceRef, type KubeObject, keyCodec, type Key } from '@cellfed/federation';

import type { LeadingController, RunnerOptions } from '../leading-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import { CopyWatch } from './copy-watch.ts';

/** A control-plane object by namespace and name, for controllers keyed by one. */
const NAMESPACED_KEYS = keyCodec(['namespace', 'name']);
export type NamespacedKey = Key<'namespace' | 'name'>;

export interface CopiedKindControllerOptions<T extends KubeObject> {
  /** Names the controller in metrics and logs. */
  name: string;
  /**
   * The control-plane resource, and the label selector of cellfed's copies of it in the cells (none: the
   * cells are read by the reconciler only, nothing of them is watched).
   */
  resource: ResourceRef;
  /** Which control-plane objects: one namespace's, those a label selector picks (all when absent). */
  watched?: { namespace?: string; labelSelector?: string };
  copySelector: string | undefined;
  controlPlane: KubeClient;
  pool: CellPool;
  plans: PlanHolder;
  /** The reconciler, given the cache of the control-plane objects. */
  reconciler: (cached: (namespace: string, name: string) => T | undefined) => Reconciler<NamespacedKey>;
  /** The runner's settings the rebalance controller's background controllers share. */
  runner: RunnerOptions;
}

/**
 * One controller per control-plane object of a kind whose copies in the cells do the work (quotas, budgets,
 * autoscalers, claims): a cache of the control-plane objects (always running, so a new leader starts warm), a watch
 * of the copies in every engaged cell, and the reconciler (while leading). An object is queued when it
 * changes, when one of its copies does, and all are when the plan or the engaged cells change.
 */
export class CopiedKindController<T extends KubeObject> implements LeadingController {
  private readonly objects: Informer<T>;
  private readonly controller: Controller<NamespacedKey>;

  constructor(options: CopiedKindControllerOptions<T>) {
    const { controlPlane, pool, plans, resource } = options;
    const { logger, registry, clock } = options.runner;
    this.objects = new Informer<T>({
      cell: CONTROL_PLANE,
      resource: resourceId(resource),
      listWatch: resourceListWatch(controlPlane, resource, options.watched) as ListWatch<T>,
      logger,
      registry,
      clock,
    });
    this.controller = new Controller({
      ...options.runner,
      name: options.name,
      reconciler: options.reconciler((namespace, name) => this.get(namespace, name)),
      keys: NAMESPACED_KEYS,
    });
    this.objects.addHandler((event) => {
      const { namespace, name } = parseKey(event.key);
      this.enqueue({ namespace, name }, event.lane);
    });
    if (options.copySelector !== undefined)
      pool.subscribe(
        new CopyWatch({
          resource,
          labelSelector: options.copySelector,
          logger,
          registry,
          onChange: (namespace, name) => this.enqueue({ namespace, name }),
        }),
      );
    // A cell that joins, leaves or goes Down changes where the copies are.
    plans.onLoad(() => this.enqueueAll());
    pool.subscribe({ engage: () => this.enqueueAll() });
  }

  get(namespace: string, name: string): T | undefined {
    return this.objects.get(formatKey({ cell: CONTROL_PLANE, namespace, name }));
  }

  enqueue(key: NamespacedKey, lane?: Lane): void {
    this.controller.enqueue(key, lane);
  }

  /** Queues every object of a namespace, in the high lane. */
  enqueueNamespace(namespace: string): void {
    for (const key of this.objects.keys()) {
      const object = parseKey(key);
      if (object.namespace === namespace) this.enqueue({ namespace, name: object.name }, 'high');
    }
  }

  /** Adds a handler of the control-plane objects' changes. */
  onChange(handler: Parameters<Informer<T>['addHandler']>[0]): void {
    this.objects.addHandler(handler);
  }

  runCaches(signal: AbortSignal): Promise<void> {
    return this.objects.run(signal);
  }

  waitForSync(signal: AbortSignal): Promise<boolean> {
    return this.objects.waitForSync(signal);
  }

  start(): void {
    this.enqueueAll();
    this.controller.start();
  }

  stop(): Promise<boolean> {
    return this.controller.stop(5000);
  }

  private enqueueAll(): void {
    for (const key of this.objects.keys()) {
      const { namespace, name } = parseKey(key);
      this.enqueue({ namespace, name }, 'low');
    }
  }
}
