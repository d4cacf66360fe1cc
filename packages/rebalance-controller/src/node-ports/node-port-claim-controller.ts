import { NODE_PORT_CLAIM_LABEL } from '@cellfed/api';
import type { CellPool, KubeClient } from '@cellfed/controller-kit';
import { SERVICES, type Service } from '@cellfed/federation';

import type { CellLookup } from '../cell-end.ts';
import { CopiedKindController } from '../copies/copied-kind-controller.ts';
import type { RunnerOptions } from '../leading-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import { NodePortClaimReconciler } from './node-port-claim-reconciler.ts';

export interface NodePortClaimControllerOptions {
  controlPlane: KubeClient;
  /** cellfed's namespace in the control plane, where the router writes the claims. */
  claimsNamespace: string;
  pool: CellPool;
  plans: PlanHolder;
  cell: CellLookup;
  runner: RunnerOptions;
}

/** The router's node-port claims (labelled Services in cellfed's namespace), each freed once no cell holds its Service. */
export function nodePortClaimController(
  options: NodePortClaimControllerOptions,
): CopiedKindController<Service> {
  const { controlPlane, plans } = options;
  return new CopiedKindController<Service>({
    name: 'node-port-claims',
    resource: SERVICES,
    watched: { namespace: options.claimsNamespace, labelSelector: NODE_PORT_CLAIM_LABEL },
    copySelector: undefined,
    controlPlane,
    pool: options.pool,
    plans,
    reconciler: (service) =>
      new NodePortClaimReconciler({
        plans,
        controlPlane,
        claim: service,
        cell: options.cell,
        clock: options.runner.clock,
        record: (type, reason, note) => options.pool.recordOnCellSet(type, reason, note),
      }),
    runner: options.runner,
  });
}
