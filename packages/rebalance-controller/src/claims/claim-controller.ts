import { FOLLOWER_LABEL } from '@cellfed/api';
import { CONTROL_PLANE, type CellPool, type KubeClient } from '@cellfed/controller-kit';
import { CLAIMS, type CellularObjectRef } from '@cellfed/federation';

import type { CellLookup } from '../cell-end.ts';
import { CopiedKindController } from '../copies/copied-kind-controller.ts';
import type { RunnerOptions } from '../leading-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import { ClaimReconciler, type PersistentVolumeClaim } from './claim-reconciler.ts';

export interface ClaimControllerOptions {
  controlPlane: KubeClient;
  pool: CellPool;
  plans: PlanHolder;
  cell: CellLookup;
  /** The cells whose pod templates name a claim (the followers know). */
  cellsNaming: (ref: CellularObjectRef) => string[];
  runner: RunnerOptions;
}

/**
 * The control plane's PersistentVolumeClaims, each copied into the cell whose pods mount it. Besides its
 * own events, a claim is queued when the followers see pod templates begin or stop naming it.
 */
export function claimController(
  options: ClaimControllerOptions,
): CopiedKindController<PersistentVolumeClaim> {
  const { controlPlane, plans } = options;
  return new CopiedKindController<PersistentVolumeClaim>({
    name: 'claims',
    resource: CLAIMS,
    copySelector: `${FOLLOWER_LABEL}=${CONTROL_PLANE}`,
    controlPlane,
    pool: options.pool,
    plans,
    reconciler: (claim) =>
      new ClaimReconciler({
        plans,
        controlPlane,
        claim,
        cellsNaming: options.cellsNaming,
        cell: options.cell,
      }),
    runner: options.runner,
  });
}
