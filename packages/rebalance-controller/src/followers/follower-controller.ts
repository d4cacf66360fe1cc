import {
  Controller,
  type CellObjects,
  type KubeClient,
  type Lane,
  type QuotaDraw,
} from '@cellfed/controller-kit';
import {
  CONFIG_MAPS,
  SECRETS,
  hasPodTemplate,
  parseObjectKey,
  resourceName,
  type CellularObjectRef,
} from '@cellfed/federation';

import type { CellLookup } from '../cell-end.ts';
import type { LeadingController, RunnerOptions } from '../leading-controller.ts';
import type { SharedChanges } from '../mirror/shared-changes.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import type { RebalanceMetrics } from '../rebalance-metrics.ts';
import { AdmissionParams, isPolicyKind, POLICY_KINDS } from './admission-params.ts';
import { FOLLOWER_KEYS, FollowerReconciler, type FollowerKey } from './follower-reconciler.ts';

export interface FollowerControllerOptions {
  controlPlane: KubeClient;
  plans: PlanHolder;
  objects: CellObjects;
  /** The control plane's admission policies and bindings, kept whole there (see isPolicyKind). */
  sharedChanges: SharedChanges;
  cell: CellLookup;
  quota?: QuotaDraw;
  /** Told the claims a cell's pod templates in a namespace began or stopped naming. */
  onClaimsNamed: (namespace: string, claims: readonly string[]) => void;
  metrics: RebalanceMetrics;
  resyncMs?: number;
  runner: RunnerOptions;
}

/**
 * The follower copies (keyed by cell and namespace). A workload copy whose spec changed (a new generation:
 * status writes do not count), came or went queues its cell's namespace; a ConfigMap or Secret queues the
 * cells whose pod templates name it, or every live cell when an admission binding names it as a param; a
 * change of what the bindings name queues every live cell in the namespaces the old or new params are in.
 */
export class FollowerController implements LeadingController {
  private readonly controller: Controller<FollowerKey>;
  private readonly reconciler: FollowerReconciler;
  private readonly plans: PlanHolder;
  private readonly objects: CellObjects;
  private readonly sharedChanges: SharedChanges;
  /** The generation of each workload copy (`cell/key`) last seen, so only spec changes queue followers. */
  private readonly templateGenerations = new Map<string, number>();
  /** The params the control plane's admission policy bindings name, as of the last change to them. */
  private params = AdmissionParams.NONE;
  private paramsPending = false;

  constructor(options: FollowerControllerOptions) {
    const { plans, objects, sharedChanges } = options;
    this.plans = plans;
    this.objects = objects;
    this.sharedChanges = sharedChanges;
    this.reconciler = new FollowerReconciler({
      plans,
      copies: objects,
      cell: options.cell,
      controlPlane: options.controlPlane,
      metrics: options.metrics,
      ...(options.resyncMs === undefined ? {} : { resyncMs: options.resyncMs }),
      ...(options.quota ? { quota: options.quota } : {}),
      params: () => (this.paramsReady() ? this.params : undefined),
      onClaimsNamed: options.onClaimsNamed,
    });
    this.controller = new Controller({
      ...options.runner,
      name: 'followers',
      reconciler: this.reconciler,
      keys: FOLLOWER_KEYS,
    });
    objects.addHandler((key, lane, cell) => this.objectChanged(key, lane, cell));
    sharedChanges.addHandler((resource) => {
      if (isPolicyKind(resource)) this.paramsChanged();
    });
    plans.onLoad(() => this.followParams(AdmissionParams.NONE, this.params));
  }

  /** The cells whose pod templates name an object (for the claims' controller). */
  cellsNaming(ref: CellularObjectRef): string[] {
    return this.reconciler.cellsNaming(ref);
  }

  start(): void {
    this.controller.start();
  }

  stop(): Promise<boolean> {
    return this.controller.stop(5000);
  }

  private objectChanged(key: string, lane: Lane, cell: string): void {
    const plan = this.plans.current();
    const ref = plan && parseObjectKey(key, plan.resources);
    if (!plan || !ref) return;
    if (hasPodTemplate(ref.resource)) {
      const copy = `${cell}/${key}`;
      const generation = this.objects.copiesOf(ref).get(cell)?.generation;
      const seen = this.templateGenerations.get(copy);
      if (generation === undefined) this.templateGenerations.delete(copy);
      else this.templateGenerations.set(copy, generation);
      if (lane === 'low' || seen !== generation)
        this.controller.enqueue({ cell, namespace: ref.namespace }, lane);
      return;
    }
    const name = resourceName(ref.resource);
    if (name !== resourceName(CONFIG_MAPS) && name !== resourceName(SECRETS)) return;
    for (const follower of this.reconciler.cellsNaming(ref))
      this.controller.enqueue({ cell: follower, namespace: ref.namespace }, lane);
    // A param a binding names, new or changed: every cell needs its follower.
    const labels = this.objects.copiesOf(ref).get(cell)?.labels;
    if (this.params.names(ref.resource.resource, ref.namespace, { name: ref.name, labels }))
      for (const live of plan.liveCells)
        this.controller.enqueue({ cell: live, namespace: ref.namespace }, lane);
  }

  /** Whether the params are those of every listed policy and binding (none pending). */
  private paramsReady(): boolean {
    return (
      !this.paramsPending &&
      POLICY_KINDS.every(
        (kind) => this.sharedChanges.synced(kind.policies) && this.sharedChanges.synced(kind.bindings),
      )
    );
  }

  /**
   * An admission policy or binding changed in the control plane: if the params the bindings name changed,
   * every live cell's followers are compared again in the namespaces the old or new params are in. Once per
   * turn of the event loop, however many events the first list brings.
   */
  private paramsChanged(): void {
    if (this.paramsPending) return;
    this.paramsPending = true;
    queueMicrotask(() => {
      this.paramsPending = false;
      const kinds = POLICY_KINDS.map(({ policies, bindings }) => ({
        policies: this.sharedChanges.objects(policies),
        bindings: this.sharedChanges.objects(bindings),
      }));
      const before = this.params;
      const after = AdmissionParams.of(kinds);
      if (after.equals(before)) return;
      this.params = after;
      this.followParams(before, after);
    });
  }

  /** Queues every live cell's followers in the namespaces where params were or are. */
  private followParams(before: AdmissionParams, after: AdmissionParams): void {
    const plan = this.plans.current();
    if (!plan) return;
    // One scan of the cells' caches for the old wants and the new together.
    const either = new AdmissionParams([...before.wants, ...after.wants]);
    for (const namespace of either.namespaces(this.objects))
      for (const cell of plan.liveCells) this.controller.enqueue({ cell, namespace });
  }
}
