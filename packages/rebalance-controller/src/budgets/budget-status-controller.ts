import { MIRRORED_FROM_CONTROL_PLANE, MIRRORED_LABEL } from '@cellfed/api';
import type { CellPool, KubeClient } from '@cellfed/controller-kit';

import type { CellLookup } from '../cell-end.ts';
import { CopiedKindController } from '../copies/copied-kind-controller.ts';
import type { RunnerOptions } from '../leading-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import { BudgetStatusReconciler } from './budget-status-reconciler.ts';
import { PDBS, type PodDisruptionBudget } from './budget-status.ts';

export interface BudgetStatusControllerOptions {
  controlPlane: KubeClient;
  pool: CellPool;
  plans: PlanHolder;
  cell: CellLookup;
  runner: RunnerOptions;
}

/** The control plane's PodDisruptionBudgets, their status summed from the mirrored copies in the cells. */
export function budgetStatusController(
  options: BudgetStatusControllerOptions,
): CopiedKindController<PodDisruptionBudget> {
  const { controlPlane, plans } = options;
  return new CopiedKindController<PodDisruptionBudget>({
    name: 'budget-status',
    resource: PDBS,
    copySelector: `${MIRRORED_LABEL}=${MIRRORED_FROM_CONTROL_PLANE}`,
    controlPlane,
    pool: options.pool,
    plans,
    reconciler: (budget) =>
      new BudgetStatusReconciler({
        plans,
        controlPlane,
        budget,
        cell: options.cell,
        clock: options.runner.clock,
      }),
    runner: options.runner,
  });
}
