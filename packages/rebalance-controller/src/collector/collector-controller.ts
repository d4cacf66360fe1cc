import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '@cellfed/api';
import { Controller, type CellObjects, type KubeClient, type Lane } from '@cellfed/controller-kit';
import { OBJECT_KEYS, heldOwnersOrNone, parseObjectKey, type ObjectKey } from '@cellfed/federation';

import { PlannedObjects } from '../planned-objects.ts';
import type { CellLookup } from '../cell-end.ts';
import type { LeadingController, RunnerOptions } from '../leading-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import type { RebalanceMetrics } from '../rebalance-metrics.ts';
import { DependentsIndex, groupOf, ownerName } from './dependents-index.ts';
import { GarbageCollectorReconciler } from './garbage-collector-reconciler.ts';
import type { OwnerKinds } from './owner-kinds.ts';

export interface CollectorControllerOptions {
  controlPlane: KubeClient;
  plans: PlanHolder;
  objects: CellObjects;
  cell: CellLookup;
  kinds: OwnerKinds;
  namespaceLabels: (namespace: string) => Record<string, string> | undefined;
  metrics: RebalanceMetrics;
  resyncMs?: number;
  runner: RunnerOptions;
}

/**
 * The garbage collector across cells (keyed by the dependent), with the index of which objects hold
 * references to which owners. A copy's change queues its object if it holds owner references or waits on an
 * orphan or foreground finalizer, and queues at once whatever holds a reference to it (it may be the owner
 * that went).
 */
export class CollectorController implements LeadingController {
  private readonly controller: Controller<ObjectKey>;
  private readonly dependents = new DependentsIndex();
  private readonly plans: PlanHolder;
  private readonly objects: CellObjects;

  constructor(options: CollectorControllerOptions) {
    const { plans, objects } = options;
    this.plans = plans;
    this.objects = objects;
    this.controller = new Controller({
      ...options.runner,
      name: 'garbage-collector',
      reconciler: new PlannedObjects(
        plans,
        new GarbageCollectorReconciler({
          copies: objects,
          cell: options.cell,
          controlPlane: options.controlPlane,
          kinds: options.kinds,
          namespaceLabels: options.namespaceLabels,
          dependents: (owner) => this.dependents.dependents(owner),
          metrics: options.metrics,
          ...(options.resyncMs === undefined ? {} : { resyncMs: options.resyncMs }),
        }),
      ),
      keys: OBJECT_KEYS,
    });
    objects.addHandler((key, lane) => this.ownersChanged(key, lane));
  }

  start(): void {
    for (const key of this.dependents.all()) this.controller.queue.add(key, 'low');
    this.controller.start();
  }

  stop(): Promise<boolean> {
    return this.controller.stop(5000);
  }

  private ownersChanged(key: string, lane: Lane): void {
    const plan = this.plans.current();
    const ref = plan && parseObjectKey(key, plan.resources);
    if (!ref) return;
    const copies = [...this.objects.copiesOf(ref).values()];
    const owners = new Set<string>();
    for (const metadata of copies)
      for (const owner of heldOwnersOrNone(metadata.annotations))
        owners.add(ownerName(groupOf(owner.apiVersion), ref.namespace, owner.name));
    this.dependents.set(key, owners);
    const held = copies.some((metadata) =>
      metadata.finalizers?.some(
        (finalizer) => finalizer === ORPHAN_FINALIZER || finalizer === FOREGROUND_FINALIZER,
      ),
    );
    if (owners.size > 0 || held) this.controller.queue.add(key, lane);
    for (const dependent of this.dependents.dependents(
      ownerName(ref.resource.group, ref.namespace, ref.name),
    ))
      this.controller.queue.add(dependent, 'high');
  }
}
