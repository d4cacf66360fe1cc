import {
  CONTROL_PLANE,
  Controller,
  Informer,
  CELL_KEYS,
  formatKey,
  resourceListWatch,
  type CellKey,
  type CellPool,
  type ControlPlaneNamespaces,
  type KubeClient,
} from '@cellfed/controller-kit';
import { CRDS } from '@cellfed/federation';

import type { LeadingController, RunnerSettings } from '../leading-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import { MirrorReconciler, type OtherCellUsers } from './mirror-reconciler.ts';
import type { MirrorState } from './mirror-state.ts';
import type { SharedChanges } from './shared-changes.ts';
import { mirroredResources } from './shared-objects.ts';

export interface MirrorControllerOptions {
  controlPlane: KubeClient;
  pool: CellPool;
  plans: PlanHolder;
  namespaces: ControlPlaneNamespaces;
  /** The control plane's mirrored objects; the mirror chooses which resources it watches. */
  sharedChanges: SharedChanges;
  state: MirrorState;
  /** Called after each complete pass over a cell (the CellSet's gate may open). */
  onMirrored: () => void;
  /** The other components' user names in the cells (see MirrorReconcilerOptions). */
  cellUsers?: OtherCellUsers;
  resyncMs?: number;
  runner: RunnerSettings;
}

/**
 * The shared objects mirrored into every cell (keyed by cell id), with the cache of the control plane's
 * CRDs. Every cell is queued when a namespace, a CRD or a mirrored object changes, or a new generation of
 * the CellSet is loaded (a cell may be back from Down, or the shared resources changed); a cell when it is
 * engaged (it is not mirrored until a pass says so).
 */
export class MirrorController implements LeadingController {
  private readonly crds: Informer;
  private readonly controller: Controller<CellKey>;
  private readonly pool: CellPool;

  constructor(options: MirrorControllerOptions) {
    const { controlPlane, pool, plans, namespaces, sharedChanges, state, runner } = options;
    this.pool = pool;
    this.crds = new Informer({
      ...runner,
      cell: CONTROL_PLANE,
      resource: 'apiextensions.k8s.io/v1/customresourcedefinitions',
      listWatch: resourceListWatch(controlPlane, CRDS),
    });
    this.controller = new Controller({
      ...runner,
      name: 'mirror',
      reconciler: new MirrorReconciler({
        plans,
        controlPlane,
        ...(options.resyncMs === undefined ? {} : { resyncMs: options.resyncMs }),
        cell: (id) => pool.get(id),
        namespaces: () => namespaces.list(),
        crd: (name) => this.crds.get(formatKey({ cell: CONTROL_PLANE, namespace: '', name })),
        state,
        onMirrored: options.onMirrored,
        ...(options.cellUsers ? { cellUsers: options.cellUsers } : {}),
      }),
      workers: 2,
      keys: CELL_KEYS,
    });
    // A new ServiceAccount (or shared Secret) reaches every cell at once, before a workload's pods need it.
    sharedChanges.addHandler((_resource, lane) => {
      if (lane === 'high') this.enqueueAll();
    });
    plans.onLoad(() => {
      const spec = plans.current()?.spec;
      if (spec) sharedChanges.watch(mirroredResources(spec));
      this.enqueueAll();
    });
    namespaces.onChange(() => this.enqueueAll());
    this.crds.addHandler(() => this.enqueueAll());
    pool.subscribe({
      engage: (cell) => {
        state.set(cell.id, false);
        this.controller.enqueue({ cell: cell.id });
      },
    });
  }

  runCaches(signal: AbortSignal): Promise<void> {
    return this.crds.run(signal);
  }

  waitForSync(signal: AbortSignal): Promise<boolean> {
    return this.crds.waitForSync(signal);
  }

  start(): void {
    this.enqueueAll();
    this.controller.start();
  }

  stop(): Promise<boolean> {
    return this.controller.stop(5000);
  }

  private enqueueAll(): void {
    for (const cell of this.pool.cells()) this.controller.enqueue({ cell: cell.id });
  }
}
