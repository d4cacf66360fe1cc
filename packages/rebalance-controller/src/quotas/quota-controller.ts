import { type CellPool, type KubeClient } from '@cellfed/controller-kit';
import { RESOURCE_QUOTAS, QUOTA_COPY_SELECTOR, type ResourceQuota } from '@cellfed/federation';

import type { CellLookup } from '../cell-end.ts';
import { CopiedKindController } from '../copies/copied-kind-controller.ts';
import type { RunnerOptions } from '../leading-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import { QuotaReconciler } from './quota-reconciler.ts';

export interface QuotaControllerOptions {
  controlPlane: KubeClient;
  pool: CellPool;
  plans: PlanHolder;
  cell: CellLookup;
  /** Whether cells hold follower copies, which they count and the federation does not. */
  followers: boolean;
  runner: RunnerOptions;
}

/**
 * The control plane's ResourceQuotas divided among the cells (keyed by quota), with their cache and a watch
 * of their copies' in every cell. A move its new cell's quota refused queues its namespace's quotas at once
 * ({@link CopiedKindController.enqueueNamespace}).
 */
export function quotaController(options: QuotaControllerOptions): CopiedKindController<ResourceQuota> {
  const { controlPlane, plans } = options;
  return new CopiedKindController<ResourceQuota>({
    name: 'quotas',
    resource: RESOURCE_QUOTAS,
    copySelector: QUOTA_COPY_SELECTOR,
    controlPlane,
    pool: options.pool,
    plans,
    reconciler: (quota) =>
      new QuotaReconciler({
        plans,
        controlPlane,
        quota,
        cell: options.cell,
        followers: options.followers,
        clock: options.runner.clock,
      }),
    runner: options.runner,
  });
}
