import type { ReconcileRequest, ReconcileResult, Reconciler } from '@cellfed/controller-kit';
import {
  OBJECT_KEYS,
  isCellOwnObject,
  objectRefOf,
  type ObjectKey,
  type CellularObjectRef,
} from '@cellfed/federation';

import type { PlanHolder, RebalancePlan } from './rebalance-plan.ts';

/** One cellular object to reconcile under the plan in force. */
export interface ObjectRequest extends Omit<ReconcileRequest<ObjectKey>, 'key'> {
  readonly plan: RebalancePlan;
  readonly ref: CellularObjectRef;
  /** The key as the queue writes it: what a reconciler remembers of an object is keyed by it. */
  readonly key: string;
}

/** A reconciler of one cellular object (the migrations, the collector). */
export interface ObjectReconciler {
  reconcile(request: ObjectRequest): Promise<ReconcileResult>;
}

/**
 * Lifts an {@link ObjectReconciler} to the queue's object keys, with the checks every one of them makes
 * first (multicluster-runtime's reconciler wrapper): nothing is done before a CellSet generation is loaded,
 * for a key whose resource is not cellular under it, or for a cell's own object (its system namespaces').
 */
export class PlannedObjects implements Reconciler<ObjectKey> {
  private readonly plans: PlanHolder;
  private readonly inner: ObjectReconciler;

  constructor(plans: PlanHolder, inner: ObjectReconciler) {
    this.plans = plans;
    this.inner = inner;
  }

  async reconcile({ key, ...request }: ReconcileRequest<ObjectKey>): Promise<ReconcileResult> {
    const plan = this.plans.current();
    if (!plan) return {};
    const ref = objectRefOf(key, plan.resources);
    if (!ref || isCellOwnObject(ref)) return {};
    return this.inner.reconcile({ ...request, plan, ref, key: OBJECT_KEYS.format(key) });
  }
}
