import type { Tracer } from '@opentelemetry/api';
import { DEFAULT_SECRET_NAMESPACE } from '@cellfed/api';
import {
  CellObjects,
  ControlPlaneNamespaces,
  NOOP_TRACER,
  QuotaDraw,
  realClock,
  untilAborted,
  type CellPool,
  type Clock,
  type KubeClient,
} from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

import { autoscalerController } from './autoscalers/autoscaler-controller.ts';
import { budgetStatusController } from './budgets/budget-status-controller.ts';
import type { CellLookup } from './cell-end.ts';
import { CellSetController } from './cellset/cellset-controller.ts';
import { claimController } from './claims/claim-controller.ts';
import { nodePortClaimController } from './node-ports/node-port-claim-controller.ts';
import { CollectorController } from './collector/collector-controller.ts';
import { OwnerKinds } from './collector/owner-kinds.ts';
import type { CopiedKindController } from './copies/copied-kind-controller.ts';
import { FollowerController } from './followers/follower-controller.ts';
import { isPolicyKind } from './followers/admission-params.ts';
import { backgroundRunner, type LeadingController } from './leading-controller.ts';
import { NamespaceDeletionController } from './namespaces/namespace-deletion-controller.ts';
import { MigrationController, type MigrationSettings } from './migration/migration-controller.ts';
import { MirrorController } from './mirror/mirror-controller.ts';
import { MirrorState } from './mirror/mirror-state.ts';
import { SharedChanges } from './mirror/shared-changes.ts';
import { quotaController } from './quotas/quota-controller.ts';
import { RebalanceMetrics } from './rebalance-metrics.ts';
import { PlanHolder } from './rebalance-plan.ts';
import type { PersistentVolumeClaim } from './claims/claim-reconciler.ts';

interface RebalanceSettings extends MigrationSettings {
  /** How often each cell is compared with the control plane's shared objects. Default 60 s. */
  mirrorResyncMs?: number;
  /**
   * How often an object with held owner references is checked again although nothing changed (owners in
   * the control plane are not watched). Default 60 s.
   */
  collectorResyncMs?: number;
  /**
   * Keep in each cell the ConfigMaps and Secrets its workloads' pod templates name, where they live
   * elsewhere (follower copies). Default true.
   */
  followPodReferences?: boolean;
  /**
   * Divide each control-plane ResourceQuota among the cells (its status is written by kube's own quota
   * controller reading the federation through the router: the chart's quota controller). Default true.
   */
  divideQuotas?: boolean;
  /**
   * Write each control-plane PodDisruptionBudget's status from its copies in the cells (the control plane's
   * own disruption controller must be off). Default true.
   */
  sumBudgets?: boolean;
  /**
   * Copy each control-plane HorizontalPodAutoscaler into its target's cell and show the copy's status (the
   * control plane's own autoscaler must be off). Default true.
   */
  followAutoscalers?: boolean;
  /**
   * Copy each control-plane PersistentVolumeClaim into the cell whose pod templates mount it, and show the
   * copy's status (with followPodReferences; the control plane's own volume binder must be off). Default true.
   */
  followClaims?: boolean;
  /**
   * Finalize every control-plane namespace until no live cell has its copy (namespaces/). Default true.
   */
  finalizeNamespaces?: boolean;
  /**
   * The user names the router and the backup controller call the cells as, where they have identities of
   * their own there: exempt, with the controller's own, from the marks policy and mirrored admission
   * objects, and the backup controller's from the fence too. Default: none (one identity for all components).
   */
  routerCellUser?: string | undefined;
  backupControllerCellUser?: string | undefined;
  /** Where the routers' Leases are. Default `cellfed-system`. */
  secretNamespace?: string;
}

export interface RebalanceControllerOptions {
  controlPlane: KubeClient;
  pool: CellPool;
  settings: RebalanceSettings;
  logger: Logger;
  registry: Registry;
  /** Makes a span per reconcile of every controller; none by default. */
  tracer?: Tracer;
  clock?: Clock;
}

/**
 * The rebalance controller's parts, wired: the caches its controllers share (the CellSet's plan, the control
 * plane's namespaces and mirrored objects, every cell's cellular objects), always running so a new leader
 * starts warm; and the controllers that run only while leading, each in its own folder, each mapping the
 * events it needs to its own keys — the CellSet lifecycle, the shared-object mirror (per cell), the
 * migrations (per object, `window` workers), the garbage collector across cells (per object with held owner
 * references), the follower copies of what pod templates name (per cell and namespace), the quotas divided
 * among the cells, the disruption budgets' status summed from them, and the autoscalers and claims copied
 * into their targets' and pods' cells (per control-plane object).
 */
export class RebalanceController {
  private readonly plans = new PlanHolder();
  private readonly objects: CellObjects;
  private readonly namespaces: ControlPlaneNamespaces;
  private readonly sharedChanges: SharedChanges;
  private readonly cellSet: CellSetController;
  /** In the order they start: the lifecycle and the mirror first, which the moves' gate waits on. */
  private readonly controllers: LeadingController[];
  /**
   * The kinds copied into cells (budgets, autoscalers, claims): each starts once its own cache is listed,
   * so one whose list never completes (its RBAC, a version the control plane does not serve) holds up
   * nothing else.
   */
  private readonly copiedKinds: LeadingController[];
  private readonly pool: CellPool;

  constructor(options: RebalanceControllerOptions) {
    const { controlPlane, pool, settings, logger, registry } = options;
    const clock = options.clock ?? realClock;
    const runner = { logger, registry, clock, tracer: options.tracer ?? NOOP_TRACER };
    const background = backgroundRunner(runner, settings.scanQps);
    const { plans } = this;
    this.pool = pool;
    const metrics = new RebalanceMetrics(registry);
    this.namespaces = new ControlPlaneNamespaces({ controlPlane, logger, registry, clock });
    const namespaceLabels = (namespace: string) => this.namespaces.labels(namespace);
    this.objects = new CellObjects({
      metadataOnly: true,
      logger,
      registry,
      resources: () => plans.current()?.spec.cellularResources ?? [],
    });
    // The admission policies and bindings are kept whole: the followers read the params they name.
    this.sharedChanges = new SharedChanges({
      controlPlane,
      logger,
      registry,
      clock,
      keepWhole: isPolicyKind,
    });
    const cell: CellLookup = (id) => {
      const engaged = pool.get(id);
      return engaged ? { id, client: engaged.client } : undefined;
    };
    const kinds = new OwnerKinds(controlPlane, () => clock.now());
    // Moves and followers into a cell whose quota share is full draw unused share from the other cells.
    const quotaDraw =
      settings.divideQuotas === false
        ? undefined
        : new QuotaDraw({
            cells: () => (plans.current()?.liveCells ?? []).flatMap((id) => cell(id) ?? []),
            logger: logger.child({ component: 'quota-draw' }),
          });

    // Every replica loads the plan, leading or not, so a standby's caches follow the CellSet's cellular
    // resources too and it takes over warm; the lifecycle reconciler reports on the plan while leading.
    pool.cellSets.addHandler(() => {
      const cellSet = pool.cellSet().current;
      if (cellSet) plans.load(cellSet.spec, cellSet.metadata.generation ?? 0);
    });
    plans.onLoad(() => this.objects.resourcesChanged());

    const quotas =
      settings.divideQuotas === false
        ? undefined
        : quotaController({
            controlPlane,
            pool,
            plans,
            cell,
            followers: settings.followPodReferences !== false,
            runner: background,
          });
    const migrations = new MigrationController({
      pool,
      plans,
      objects: this.objects,
      namespaces: this.namespaces,
      cell,
      ...(quotaDraw ? { quota: quotaDraw } : {}),
      ...(quotas ? { onQuotaRefused: (namespace: string) => quotas.enqueueNamespace(namespace) } : {}),
      settings,
      metrics,
      runner,
    });
    const collector = new CollectorController({
      controlPlane,
      plans,
      objects: this.objects,
      cell,
      kinds,
      namespaceLabels,
      metrics,
      ...(settings.collectorResyncMs === undefined ? {} : { resyncMs: settings.collectorResyncMs }),
      runner: background,
    });
    let claims: CopiedKindController<PersistentVolumeClaim> | undefined;
    const followers =
      settings.followPodReferences === false
        ? undefined
        : new FollowerController({
            controlPlane,
            plans,
            objects: this.objects,
            sharedChanges: this.sharedChanges,
            cell,
            ...(quotaDraw ? { quota: quotaDraw } : {}),
            onClaimsNamed: (namespace, names) => {
              for (const name of names) claims?.enqueue({ namespace, name });
            },
            metrics,
            ...(settings.mirrorResyncMs === undefined ? {} : { resyncMs: settings.mirrorResyncMs }),
            runner: background,
          });
    const budgets =
      settings.sumBudgets === false
        ? undefined
        : budgetStatusController({ controlPlane, pool, plans, cell, runner: background });
    const autoscalers =
      settings.followAutoscalers === false
        ? undefined
        : autoscalerController({
            controlPlane,
            pool,
            plans,
            objects: this.objects,
            cell,
            kinds,
            runner: background,
          });
    if (followers && settings.followClaims !== false)
      claims = claimController({
        controlPlane,
        pool,
        plans,
        cell,
        cellsNaming: (ref) => followers.cellsNaming(ref),
        runner: background,
      });
    const nodePortClaims = nodePortClaimController({
      controlPlane,
      claimsNamespace: settings.secretNamespace ?? DEFAULT_SECRET_NAMESPACE,
      pool,
      plans,
      cell,
      runner: background,
    });
    const mirrorState = new MirrorState();
    this.cellSet = new CellSetController({
      controlPlane,
      pool,
      plans,
      copies: this.objects,
      mirror: mirrorState,
      namespaceLabels,
      enqueueAllObjects: () => migrations.enqueueAll(),
      metrics,
      secretNamespace: settings.secretNamespace ?? DEFAULT_SECRET_NAMESPACE,
      runner,
    });
    const mirror = new MirrorController({
      controlPlane,
      pool,
      plans,
      namespaces: this.namespaces,
      sharedChanges: this.sharedChanges,
      state: mirrorState,
      onMirrored: () => this.cellSet.enqueue(),
      cellUsers: { router: settings.routerCellUser, backupController: settings.backupControllerCellUser },
      ...(settings.mirrorResyncMs === undefined ? {} : { resyncMs: settings.mirrorResyncMs }),
      runner,
    });
    // Mirrored namespaces end in the cells before they end in the control plane.
    const namespaceDeletion =
      settings.finalizeNamespaces === false
        ? undefined
        : new NamespaceDeletionController({
            controlPlane,
            plans,
            namespaces: this.namespaces,
            cell,
            runner: background,
          });
    this.controllers = [
      this.cellSet,
      mirror,
      namespaceDeletion,
      migrations,
      collector,
      followers,
      quotas,
    ].filter((part) => part !== undefined);
    this.copiedKinds = [budgets, autoscalers, claims, nodePortClaims].filter((part) => part !== undefined);
    pool.subscribe(this.objects);
  }

  /** The caches: for the life of the process, so a replica that becomes leader starts warm. */
  async runCaches(signal: AbortSignal): Promise<void> {
    await Promise.all([
      this.namespaces.run(signal),
      this.sharedChanges.run(signal),
      ...[...this.controllers, ...this.copiedKinds].map((controller) => controller.runCaches?.(signal)),
    ]);
  }

  /** The controllers: while leading. */
  async runControllers(signal: AbortSignal): Promise<void> {
    await this.namespaces.waitForSync(signal);
    for (const controller of this.controllers) await controller.waitForSync?.(signal);
    for (const controller of this.controllers) controller.start();
    const copiedKinds = this.copiedKinds.map(async (controller) => {
      await controller.waitForSync?.(signal);
      if (!signal.aborted) controller.start();
    });
    await untilAborted(signal);
    await Promise.all([
      ...copiedKinds,
      ...[...this.controllers, ...this.copiedKinds].map((controller) => controller.stop()),
    ]);
  }

  /** Whether the caches are listed (for /readyz). */
  readyCheck(): true | string {
    if (!this.pool.hasSynced()) return 'the CellSet and cell Secrets are not listed yet';
    if (!this.namespaces.hasSynced() || !this.cellSet.hasSynced())
      return 'control plane caches not listed yet';
    return true;
  }
}
