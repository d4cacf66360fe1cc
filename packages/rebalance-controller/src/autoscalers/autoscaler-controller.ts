import { FOLLOWER_LABEL } from '@cellfed/api';
import {
  CONTROL_PLANE,
  parseKey,
  type CellObjects,
  type CellPool,
  type KubeClient,
} from '@cellfed/controller-kit';
import { parseObjectKey } from '@cellfed/federation';

import type { CellLookup } from '../cell-end.ts';
import type { OwnerKinds } from '../collector/owner-kinds.ts';
import { CopiedKindController } from '../copies/copied-kind-controller.ts';
import type { RunnerOptions } from '../leading-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import { AUTOSCALERS, type HorizontalPodAutoscaler } from './autoscaler-copy.ts';
import { AutoscalerReconciler } from './autoscaler-reconciler.ts';
import { AutoscalerTargets } from './autoscaler-targets.ts';

export interface AutoscalerControllerOptions {
  controlPlane: KubeClient;
  pool: CellPool;
  plans: PlanHolder;
  objects: CellObjects;
  cell: CellLookup;
  kinds: OwnerKinds;
  runner: RunnerOptions;
}

/**
 * The control plane's HorizontalPodAutoscalers, each copied into its target's cell. Besides its own events,
 * an autoscaler is queued when a cellular object of its target's name changes in any cell (the target may
 * have moved, come or gone).
 */
export function autoscalerController(
  options: AutoscalerControllerOptions,
): CopiedKindController<HorizontalPodAutoscaler> {
  const { controlPlane, plans, objects } = options;
  const targets = new AutoscalerTargets();
  const autoscalers = new CopiedKindController<HorizontalPodAutoscaler>({
    name: 'autoscalers',
    resource: AUTOSCALERS,
    copySelector: `${FOLLOWER_LABEL}=${CONTROL_PLANE}`,
    controlPlane,
    pool: options.pool,
    plans,
    reconciler: (autoscaler) =>
      new AutoscalerReconciler({
        plans,
        controlPlane,
        autoscaler,
        copies: objects,
        cell: options.cell,
        kinds: options.kinds,
      }),
    runner: options.runner,
  });
  autoscalers.onChange((event) => {
    const { namespace, name } = parseKey(event.key);
    targets.set(namespace, name, autoscalers.get(namespace, name));
  });
  objects.addHandler((key, lane) => {
    const plan = plans.current();
    const ref = plan && parseObjectKey(key, plan.resources);
    if (!ref) return;
    for (const name of targets.of(ref.namespace, ref.name))
      autoscalers.enqueue({ namespace: ref.namespace, name }, lane);
  });
  return autoscalers;
}
