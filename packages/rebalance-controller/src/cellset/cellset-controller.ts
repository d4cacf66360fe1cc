import { ROUTER_CELLSET_LABEL } from '@cellfed/api';
import {
  CONTROL_PLANE,
  Controller,
  Informer,
  resourceListWatch,
  type CellPool,
  type CopiesView,
  type KubeClient,
  type ListWatch,
} from '@cellfed/controller-kit';
import { LEASES, type RouterLease } from '@cellfed/federation';

import type { LeadingController, RunnerSettings } from '../leading-controller.ts';
import type { MirrorState } from '../mirror/mirror-state.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import type { RebalanceMetrics } from '../rebalance-metrics.ts';
import { CELLSET_KEYS, CellSetReconciler, type CellSetKey } from './cellset-reconciler.ts';

export interface CellSetControllerOptions {
  controlPlane: KubeClient;
  pool: CellPool;
  /** Where the routers' Leases are. */
  secretNamespace: string;
  plans: PlanHolder;
  copies: CopiesView;
  mirror: MirrorState;
  namespaceLabels: (namespace: string) => Record<string, string> | undefined;
  /** Puts every object with something to do in the migration queue: the gate has just opened. */
  enqueueAllObjects: () => void;
  metrics: RebalanceMetrics;
  runner: RunnerSettings;
}

/**
 * The CellSet's lifecycle (one key: the CellSet's name), with the cache of the routers' Leases it gates on.
 * Queued when the CellSet's spec changes or it comes or goes (its own status writes do not count), a router
 * Lease changes, a cell is engaged, or the mirror finishes a pass.
 */
export class CellSetController implements LeadingController {
  private readonly leases: Informer<RouterLease>;
  private readonly controller: Controller<CellSetKey>;
  private readonly cellSetName: string;

  constructor(options: CellSetControllerOptions) {
    const { controlPlane, pool, runner } = options;
    this.cellSetName = pool.cellSetName;
    this.leases = new Informer<RouterLease>({
      ...runner,
      cell: CONTROL_PLANE,
      resource: 'coordination.k8s.io/v1/leases',
      listWatch: resourceListWatch(controlPlane, LEASES, {
        namespace: options.secretNamespace,
        labelSelector: `${ROUTER_CELLSET_LABEL}=${pool.cellSetName}`,
      }) as ListWatch<RouterLease>,
    });
    this.controller = new Controller({
      ...runner,
      name: 'cellset',
      reconciler: new CellSetReconciler({
        pool,
        controlPlane,
        plans: options.plans,
        copies: options.copies,
        mirror: options.mirror,
        routerLeases: () => this.leases.list(),
        namespaceLabels: options.namespaceLabels,
        enqueueAllObjects: options.enqueueAllObjects,
        metrics: options.metrics,
        clock: runner.clock,
      }),
      keys: CELLSET_KEYS,
    });
    let seenGeneration: number | undefined;
    pool.cellSets.addHandler((event) => {
      const generation = pool.cellSetObject()?.metadata.generation;
      if (event.type === 'modified' && generation === seenGeneration) return;
      seenGeneration = generation;
      this.enqueue();
    });
    this.leases.addHandler(() => this.enqueue());
    pool.subscribe({ engage: () => this.enqueue() });
  }

  /** Looks at the CellSet again. */
  enqueue(): void {
    this.controller.enqueue({ name: this.cellSetName });
  }

  /** Whether the routers' Leases are listed (for /readyz). */
  hasSynced(): boolean {
    return this.leases.hasSynced();
  }

  runCaches(signal: AbortSignal): Promise<void> {
    return this.leases.run(signal);
  }

  waitForSync(signal: AbortSignal): Promise<boolean> {
    return this.leases.waitForSync(signal);
  }

  start(): void {
    this.enqueue();
    this.controller.start();
  }

  stop(): Promise<boolean> {
    return this.controller.stop(5000);
  }
}
