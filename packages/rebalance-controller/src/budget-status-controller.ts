import { MIRRORED_LABEL, MIRRORED_FROM_CONTROL_PLANE } from '@cellfed/api';
import {
  CONTROL_PLANE,
  Controller,
  Informer,
  formatKey,
  parseKey,
  resourceListWatch,
  type CellPool,
  type Clock,
  type ControllerOptions,
  type KubeClient,
  type ListWatch,
} from '@cellfed/controller-kit';

import { BUDGET_KEYS, BudgetStatusReconciler, type BudgetKey } from './budget-status-reconciler.ts';
import { PDBS, type PodDisruptionBudget } from './budget-status.ts';
import { CopyWatch } from './copy-watch.ts';
import type { PlanHolder } from './rebalance-plan.ts';

export interface BudgetStatusControllerOptions {
  controlPlane: KubeClient;
  pool: CellPool;
  plans: PlanHolder;
  /** The runner's settings the rebalance controller's background controllers share. */
  runner: Omit<ControllerOptions<BudgetKey>, 'name' | 'reconciler' | 'keys'> & { clock: Clock };
}

/**
 * The control plane's PodDisruptionBudgets, their status summed from the cells' copies: a cache of the
 * budgets (always running, so a new leader starts warm), a watch of the copies in every engaged cell, and
 * the controller (while leading) that writes each budget's status.
 */
export class BudgetStatusController {
  private readonly budgets: Informer<PodDisruptionBudget>;
  private readonly controller: Controller<BudgetKey>;

  constructor(options: BudgetStatusControllerOptions) {
    const { controlPlane, pool, plans } = options;
    const { logger, registry, clock } = options.runner;
    this.budgets = new Informer<PodDisruptionBudget>({
      cell: CONTROL_PLANE,
      resource: 'policy/v1/poddisruptionbudgets',
      listWatch: resourceListWatch(controlPlane, PDBS) as ListWatch<PodDisruptionBudget>,
      logger,
      registry,
      clock,
    });
    this.controller = new Controller({
      ...options.runner,
      name: 'budget-status',
      reconciler: new BudgetStatusReconciler({
        plans,
        controlPlane,
        budget: (namespace, name) => this.budgets.get(formatKey({ cell: CONTROL_PLANE, namespace, name })),
        cell: (id) => pool.get(id),
        clock,
      }),
      keys: BUDGET_KEYS,
    });
    this.budgets.addHandler((event) => {
      const { namespace, name } = parseKey(event.key);
      this.controller.enqueue({ namespace, name }, event.lane);
    });
    pool.subscribe(
      new CopyWatch({
        resource: PDBS,
        labelSelector: `${MIRRORED_LABEL}=${MIRRORED_FROM_CONTROL_PLANE}`,
        logger,
        registry,
        onChange: (namespace, name) => this.controller.enqueue({ namespace, name }),
      }),
    );
    // A cell that joins, leaves or goes Down changes which copies are summed.
    plans.onLoad(() => this.enqueueAll());
    pool.subscribe({ engage: () => this.enqueueAll() });
  }

  runCache(signal: AbortSignal): Promise<void> {
    return this.budgets.run(signal);
  }

  async start(signal: AbortSignal): Promise<void> {
    await this.budgets.waitForSync(signal);
    this.enqueueAll();
    this.controller.start();
  }

  stop(timeoutMs: number): Promise<boolean> {
    return this.controller.stop(timeoutMs);
  }

  private enqueueAll(): void {
    for (const key of this.budgets.keys()) {
      const { namespace, name } = parseKey(key);
      this.controller.enqueue({ namespace, name }, 'low');
    }
  }
}
