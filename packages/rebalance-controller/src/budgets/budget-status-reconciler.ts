import { MIRROR_HASH_ANNOTATION } from '@cellfed/api';
import {
  errorMessage,
  isConflict,
  readIfExists,
  type Clock,
  type KubeClient,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@cellfed/controller-kit';
import { resourcePath } from '@cellfed/federation';

import type { CellLookup } from '../cell-end.ts';
import {
  PDBS,
  federationBudgetStatus,
  syncFailed,
  sameBudgetStatus,
  type BudgetStatus,
  type PodDisruptionBudget,
} from './budget-status.ts';
import type { NamespacedKey } from '../copies/copied-kind-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import { isCellOwn, mirroredCopy } from '../mirror/shared-objects.ts';

type Client = Pick<KubeClient, 'request'>;

export interface BudgetStatusReconcilerOptions {
  plans: PlanHolder;
  controlPlane: Client;
  /** The control plane's budget, from its cache. */
  budget: (namespace: string, name: string) => PodDisruptionBudget | undefined;
  /** An engaged cell. */
  cell: CellLookup;
  clock: Clock;
}

/**
 * Writes a control-plane PodDisruptionBudget's status as one apiserver's disruption controller would over
 * the pods of every cell (docs/governance.md#poddisruptionbudgets): each live cell holds the budget's mirrored
 * copy, whose status that cell's disruption controller computes over its own pods, and the status shown
 * through the router is their sum (federationBudgetStatus). A status is written only from copies that are
 * all current: mirrored from this version of the budget and counted since. The control plane's own
 * disruption controller must not run: it would write its count of the control plane's pods (none).
 */
export class BudgetStatusReconciler implements Reconciler<NamespacedKey> {
  private readonly options: BudgetStatusReconcilerOptions;

  constructor(options: BudgetStatusReconcilerOptions) {
    this.options = options;
  }

  async reconcile({ key, log }: ReconcileRequest<NamespacedKey>): Promise<ReconcileResult> {
    const { namespace, name } = key;
    const plan = this.options.plans.current();
    const budget = this.options.budget(namespace, name);
    // The control plane's own (its system namespaces', cellfed's) are never mirrored: no cell counts them.
    if (!plan || !budget || budget.metadata.deletionTimestamp || isCellOwn(budget, PDBS)) return {};
    const live = plan.liveCells;
    const cells = live.flatMap((id) => this.options.cell(id) ?? []);
    if (cells.length < live.length) {
      // Its pods' count is not known: the status shown stays as it was.
      log.debug({ namespace, budget: name }, 'budget status waits: a live cell is not engaged');
      return { requeueAfterMs: 5000 };
    }
    // The hash the mirror stamps on a copy of this version of the budget.
    const typed = { ...budget, apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' };
    const mirrorHash = mirroredCopy(typed).metadata.annotations?.[MIRROR_HASH_ANNOTATION];
    const path = resourcePath(PDBS, namespace, name);
    const copies: BudgetStatus[] = [];
    for (const cell of cells) {
      const copy = await readIfExists<PodDisruptionBudget>(cell.client, path);
      // A copy's mirroring or its count changes the copy, which queues the budget again. A cell that failed
      // to count (kube's failSafe leaves observedGeneration as it was) is heard at once: nothing is allowed.
      if (
        copy?.status === undefined ||
        copy.metadata.annotations?.[MIRROR_HASH_ANNOTATION] !== mirrorHash ||
        (copy.status.observedGeneration !== copy.metadata.generation && !syncFailed(copy.status))
      ) {
        log.debug(
          {
            namespace,
            budget: name,
            cell: cell.id,
            copied: copy !== undefined,
            current: copy?.metadata.annotations?.[MIRROR_HASH_ANNOTATION] === mirrorHash,
            generation: copy?.metadata.generation,
            counted: copy?.status?.observedGeneration,
          },
          'budget status waits for the cell’s count',
        );
        return {};
      }
      copies.push(copy.status);
    }
    const status = federationBudgetStatus(budget, copies, new Date(this.options.clock.now()));
    if (sameBudgetStatus(budget.status, status)) return {};
    try {
      await this.options.controlPlane.request('PUT', `${path}/status`, {
        body: { ...structuredClone(budget), status },
      });
    } catch (error) {
      // The budget changed since the cache saw it: its event queues it again.
      if (!isConflict(error)) throw error;
      log.debug({ namespace, budget: name, err: errorMessage(error) }, 'budget changed while summed');
      return { requeueAfterMs: 100 };
    }
    log.debug(
      { namespace, budget: name, expectedPods: status.expectedPods, allowed: status.disruptionsAllowed },
      'budget status written',
    );
    return {};
  }
}
