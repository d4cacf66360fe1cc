import {
  FOLLOWER_LABEL,
  FOREGROUND_FINALIZER,
  MIRRORED_FROM_CONTROL_PLANE,
  MIRRORED_LABEL,
  ORPHAN_FINALIZER,
  ROUTER_CELLSET_LABEL,
  type GroupVersionResource,
} from '@cellfed/api';
import type { Tracer } from '@opentelemetry/api';
import {
  CONTROL_PLANE,
  Controller,
  Informer,
  TokenBucket,
  realClock,
  resourceListWatch,
  untilAborted,
  type CellPool,
  type Clock,
  type KubeClient,
  type ListWatch,
  type RouterLease,
  CellObjects,
  CELL_KEYS,
  type CellKey,
  NOOP_TRACER,
  QUOTA_COPY_SELECTOR,
  QuotaDraw,
  formatKey,
  parseKey,
  type Lane,
  type ResourceQuota,
  ControlPlaneNamespaces,
} from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  CLAIMS,
  CONFIG_MAPS,
  CRDS,
  LEASES,
  RESOURCE_QUOTAS,
  SECRETS,
  resourceName,
  OBJECT_KEYS,
  formatObjectKey,
  objectKeyOf,
  parseObjectKey,
  type ObjectKey,
  heldOwnersOrNone,
  hasPodTemplate,
} from '@cellfed/federation';

import { AdmissionParams, POLICY_KINDS } from './followers/admission-params.ts';
import { CELLSET_KEYS, CellSetReconciler, type CellSetKey } from './cellset/cellset-reconciler.ts';
import { DependentsIndex, groupOf, ownerName } from './collector/dependents-index.ts';
import { FOLLOWER_KEYS, FollowerReconciler, type FollowerKey } from './followers/follower-reconciler.ts';
import { GarbageCollectorReconciler } from './collector/garbage-collector-reconciler.ts';
import { OwnerKinds } from './collector/owner-kinds.ts';
import { MigrationReconciler } from './migration/migration-reconciler.ts';
import { MirrorReconciler, MirrorState } from './mirror/mirror-reconciler.ts';
import { ObjectMover } from './migration/object-mover.ts';
import { needsWork } from './migration/needs-work.ts';
import { PlanHolder } from './rebalance-plan.ts';
import { AUTOSCALERS, type HorizontalPodAutoscaler } from './autoscalers/autoscaler-copy.ts';
import { AutoscalerReconciler } from './autoscalers/autoscaler-reconciler.ts';
import { AutoscalerTargets } from './autoscalers/autoscaler-targets.ts';
import { BudgetStatusReconciler } from './budgets/budget-status-reconciler.ts';
import { PDBS, type PodDisruptionBudget } from './budgets/budget-status.ts';
import { ClaimReconciler, type PersistentVolumeClaim } from './claims/claim-reconciler.ts';
import { CopiedKindController } from './copies/copied-kind-controller.ts';
import { CopyWatch } from './copies/copy-watch.ts';
import { QUOTA_KEYS, QuotaReconciler, type QuotaKey } from './quotas/quota-reconciler.ts';
import { RebalanceMetrics } from './rebalance-metrics.ts';
import { StatusSubresources } from './migration/status-subresources.ts';
import { SharedChanges } from './mirror/shared-changes.ts';
import { mirroredResources, sameResource } from './mirror/shared-objects.ts';

export interface RebalanceSettings {
  /** Objects moved at once at most. */
  window: number;
  /** Moves started per second at most; unlimited when absent. */
  ratePerSecond?: number;
  /** How long an old copy stays after its move. */
  deleteAfterMs: number;
  /** Objects taken from the low-priority lane (scans) per second. */
  scanQps: number;
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
 * The rebalance controller's parts, wired: caches of the control plane (namespaces, CRDs, router Leases)
 * and of every cell's cellular objects, always running so a new leader starts warm; and the controllers
 * that run only while leading — the CellSet lifecycle, the shared-object mirror (per cell), the
 * migrations (per object, `window` workers), the garbage collector across cells (per object with held
 * owner references), the follower copies of what pod templates name (per cell and namespace), the quotas
 * divided among the cells, the disruption budgets' status summed from them, and the autoscalers and claims
 * copied into their targets' and pods' cells (per control-plane object).
 */
export class RebalanceController {
  readonly plans = new PlanHolder();
  readonly objects: CellObjects;
  readonly cellSets: Controller<CellSetKey>;
  readonly mirror: Controller<CellKey>;
  readonly migrations: Controller<ObjectKey>;
  readonly collector: Controller<ObjectKey>;
  /** Follower copies, per cell and namespace; absent when turned off. */
  readonly followers: Controller<FollowerKey> | undefined;
  /** The control plane's ResourceQuotas divided among the cells; absent when turned off. */
  readonly quotas: Controller<QuotaKey> | undefined;
  private readonly quotaObjects: Informer<ResourceQuota> | undefined;
  /** The control plane's PodDisruptionBudgets, their status summed from the cells; absent when turned off. */
  private readonly budgets: CopiedKindController<PodDisruptionBudget> | undefined;
  /** The control plane's HorizontalPodAutoscalers, each copied into its target's cell; absent when off. */
  private readonly autoscalers: CopiedKindController<HorizontalPodAutoscaler> | undefined;
  private readonly autoscalerTargets = new AutoscalerTargets();
  /** The control plane's PersistentVolumeClaims, each copied into its pods' cell; absent when off. */
  private readonly claims: CopiedKindController<PersistentVolumeClaim> | undefined;
  private readonly followerReconciler: FollowerReconciler | undefined;
  /** The generation of each workload copy (`cell/key`) last seen, so only spec changes queue followers. */
  private readonly templateGenerations = new Map<string, number>();
  private readonly dependents = new DependentsIndex();
  private readonly namespaces: ControlPlaneNamespaces;
  private readonly crds: Informer;
  /**
   * To start a mirror pass when a shared object changes (the pass reads them itself), and the admission
   * policies and bindings whole, whose params the followers keep in every cell.
   */
  private readonly sharedChanges: SharedChanges;
  /** The params the control plane's admission policy bindings name, as of the last change to them. */
  private params = AdmissionParams.NONE;
  private paramsPending = false;
  private readonly leases: Informer<RouterLease>;
  private readonly pool: CellPool;
  private readonly namespaceLabels = (namespace: string) => this.namespaces.labels(namespace);

  constructor(options: RebalanceControllerOptions) {
    const { controlPlane, pool, settings, logger, registry } = options;
    const tracer = options.tracer ?? NOOP_TRACER;
    const clock = options.clock ?? realClock;
    this.pool = pool;
    const metrics = new RebalanceMetrics(registry);
    const common = { cell: CONTROL_PLANE, logger, registry, clock };
    this.namespaces = new ControlPlaneNamespaces({ controlPlane, logger, registry, clock });
    this.crds = new Informer({
      ...common,
      resource: 'apiextensions.k8s.io/v1/customresourcedefinitions',
      listWatch: resourceListWatch(controlPlane, CRDS),
    });
    this.leases = new Informer<RouterLease>({
      ...common,
      resource: 'coordination.k8s.io/v1/leases',
      listWatch: resourceListWatch(controlPlane, LEASES, {
        namespace: pool.secretNamespace,
        labelSelector: `${ROUTER_CELLSET_LABEL}=${pool.cellSetName}`,
      }) as ListWatch<RouterLease>,
    });
    const namespaceLabels = this.namespaceLabels;
    const cellEnd = (id: string) => {
      const cell = pool.get(id);
      return cell ? { id, client: cell.client } : undefined;
    };
    const mirrorState = new MirrorState();
    const statusSubresources = new StatusSubresources();
    // Moves and followers into a cell whose quota share is full draw unused share from the other cells.
    const quotaDraw =
      settings.divideQuotas === false
        ? undefined
        : new QuotaDraw({
            cells: () => (this.plans.current()?.liveCells ?? []).flatMap((id) => cellEnd(id) ?? []),
            logger: logger.child({ component: 'quota-draw' }),
          });

    const kinds = new OwnerKinds(controlPlane, () => clock.now());
    this.objects = new CellObjects({
      metadataOnly: true,
      logger,
      registry,
      resources: () => this.plans.current()?.spec.cellularResources ?? [],
      // Changes always count; the initial lists and resyncs only for objects with something to do.
      onChange: (key, lane, cell) => {
        if (lane === 'high' || this.keyNeedsWork(key)) this.migrations.queue.add(key, lane);
        this.ownersChanged(key, lane);
        this.followersChanged(key, lane, cell);
        this.targetChanged(key, lane);
      },
    });
    this.migrations = new Controller({
      name: 'migrations',
      reconciler: new MigrationReconciler({
        plans: this.plans,
        copies: this.objects,
        cell: cellEnd,
        namespaceLabels,
        mover: new ObjectMover({
          clock,
          statusSubresources,
          ...(quotaDraw
            ? { quota: quotaDraw, onQuotaRefused: (namespace: string) => this.enqueueQuotas(namespace) }
            : {}),
        }),
        metrics,
        clock,
        deleteAfterMs: settings.deleteAfterMs,
        ...(settings.ratePerSecond
          ? {
              rate: new TokenBucket(settings.ratePerSecond, Math.max(1, settings.ratePerSecond), clock.now()),
            }
          : {}),
      }),
      registry,
      tracer,
      logger,
      clock,
      workers: settings.window,
      lowLane: { qps: settings.scanQps, burst: Math.max(settings.window * 4, 100) },
      backoff: { baseMs: 200, maxMs: 30_000 },
      keys: OBJECT_KEYS,
    });
    // The per-object background controllers (the collector, the followers): two workers, scans rate-limited.
    const background = {
      registry,
      tracer,
      logger,
      clock,
      workers: 2,
      lowLane: { qps: settings.scanQps, burst: 100 },
      backoff: { baseMs: 500, maxMs: 60_000 },
    };
    this.collector = new Controller({
      ...background,
      name: 'garbage-collector',
      reconciler: new GarbageCollectorReconciler({
        plans: this.plans,
        copies: this.objects,
        cell: cellEnd,
        controlPlane,
        kinds,
        namespaceLabels,
        dependents: (owner) => this.dependents.dependents(owner),
        metrics,
        ...(settings.collectorResyncMs === undefined ? {} : { resyncMs: settings.collectorResyncMs }),
      }),
      keys: OBJECT_KEYS,
    });
    this.followerReconciler =
      settings.followPodReferences === false
        ? undefined
        : new FollowerReconciler({
            plans: this.plans,
            copies: this.objects,
            cell: cellEnd,
            controlPlane,
            metrics,
            ...(settings.mirrorResyncMs === undefined ? {} : { resyncMs: settings.mirrorResyncMs }),
            ...(quotaDraw ? { quota: quotaDraw } : {}),
            params: () => (this.paramsReady() ? this.params : undefined),
            onClaimsNamed: (namespace, names) => {
              for (const name of names) this.claims?.enqueue({ namespace, name });
            },
          });
    this.followers =
      this.followerReconciler &&
      new Controller({
        ...background,
        name: 'followers',
        reconciler: this.followerReconciler,
        keys: FOLLOWER_KEYS,
      });
    if (settings.divideQuotas !== false) {
      const quotaObjects = new Informer<ResourceQuota>({
        ...common,
        resource: 'v1/resourcequotas',
        listWatch: resourceListWatch(controlPlane, RESOURCE_QUOTAS) as ListWatch<ResourceQuota>,
      });
      const quotaCopies = new CopyWatch({
        resource: RESOURCE_QUOTAS,
        labelSelector: QUOTA_COPY_SELECTOR,
        logger,
        registry,
        onChange: (namespace, name) => this.quotas?.enqueue({ namespace, name }),
      });
      pool.subscribe(quotaCopies);
      this.quotaObjects = quotaObjects;
      this.quotas = new Controller({
        ...background,
        name: 'quotas',
        reconciler: new QuotaReconciler({
          plans: this.plans,
          controlPlane,
          quota: (namespace, name) => quotaObjects.get(formatKey({ cell: CONTROL_PLANE, namespace, name })),
          cell: cellEnd,
          followers: settings.followPodReferences !== false,
          clock,
        }),
        keys: QUOTA_KEYS,
      });
      quotaObjects.addHandler((event) => {
        const { namespace, name } = parseKey(event.key);
        this.quotas?.enqueue({ namespace, name }, event.lane);
      });
    }
    if (settings.sumBudgets !== false)
      this.budgets = new CopiedKindController<PodDisruptionBudget>({
        name: 'budget-status',
        resource: PDBS,
        copySelector: `${MIRRORED_LABEL}=${MIRRORED_FROM_CONTROL_PLANE}`,
        controlPlane,
        pool,
        plans: this.plans,
        reconciler: (budget) =>
          new BudgetStatusReconciler({ plans: this.plans, controlPlane, budget, cell: cellEnd, clock }),
        runner: background,
      });
    const followerReconciler = this.followerReconciler;
    if (followerReconciler && settings.followClaims !== false)
      this.claims = new CopiedKindController<PersistentVolumeClaim>({
        name: 'claims',
        resource: CLAIMS,
        copySelector: `${FOLLOWER_LABEL}=${CONTROL_PLANE}`,
        controlPlane,
        pool,
        plans: this.plans,
        reconciler: (claim) =>
          new ClaimReconciler({
            plans: this.plans,
            controlPlane,
            claim,
            cellsNaming: (ref) => followerReconciler.cellsNaming(ref),
            cell: cellEnd,
          }),
        runner: background,
      });
    if (settings.followAutoscalers !== false) {
      const autoscalers = new CopiedKindController<HorizontalPodAutoscaler>({
        name: 'autoscalers',
        resource: AUTOSCALERS,
        copySelector: `${FOLLOWER_LABEL}=${CONTROL_PLANE}`,
        controlPlane,
        pool,
        plans: this.plans,
        reconciler: (autoscaler) =>
          new AutoscalerReconciler({
            plans: this.plans,
            controlPlane,
            autoscaler,
            copies: this.objects,
            cell: cellEnd,
            kinds,
          }),
        runner: background,
      });
      autoscalers.onChange((event) => {
        const { namespace, name } = parseKey(event.key);
        this.autoscalerTargets.set(namespace, name, autoscalers.get(namespace, name));
      });
      this.autoscalers = autoscalers;
    }
    this.cellSets = new Controller({
      name: 'cellset',
      reconciler: new CellSetReconciler({
        pool,
        controlPlane,
        plans: this.plans,
        copies: this.objects,
        mirror: mirrorState,
        routerLeases: () => this.leases.list(),
        namespaceLabels,
        enqueueAllObjects: () => this.enqueueAllObjects(),
        metrics,
        clock,
      }),
      registry,
      tracer,
      logger,
      clock,
      keys: CELLSET_KEYS,
    });
    this.mirror = new Controller({
      name: 'mirror',
      reconciler: new MirrorReconciler({
        plans: this.plans,
        controlPlane,
        ...(settings.mirrorResyncMs === undefined ? {} : { resyncMs: settings.mirrorResyncMs }),
        cell: (id) => pool.get(id),
        namespaces: () => this.namespaces.list(),
        crd: (name) => this.crds.get(formatKey({ cell: CONTROL_PLANE, namespace: '', name })),
        state: mirrorState,
        onMirrored: () => this.cellSets.enqueue({ name: pool.cellSetName }),
      }),
      registry,
      tracer,
      logger,
      clock,
      workers: 2,
      keys: CELL_KEYS,
    });

    const cellSetChanged = () => this.cellSets.enqueue({ name: pool.cellSetName });
    // Every replica loads the plan, leading or not, so a standby's caches follow the CellSet's cellular
    // resources too and it takes over warm; the lifecycle reconciler reports on the plan while leading.
    const mirrorAll = () => {
      for (const cell of pool.cells()) this.mirror.enqueue({ cell: cell.id });
    };
    // A new ServiceAccount (or shared Secret) reaches every cell at once, before a workload's pods need it.
    const isPolicyKind = (resource: GroupVersionResource) =>
      POLICY_KINDS.some(
        (kind) => sameResource(kind.policies, resource) || sameResource(kind.bindings, resource),
      );
    this.sharedChanges = new SharedChanges({
      controlPlane,
      logger,
      registry,
      clock,
      keepWhole: isPolicyKind,
      onChange: (resource, lane) => {
        if (lane === 'high') mirrorAll();
        if (isPolicyKind(resource)) this.paramsChanged();
      },
    });
    // A new generation may bring a cell back from Down (the mirror stops looking at a Down cell) or new
    // shared resources: every cell is compared again.
    this.plans.onLoad(() => {
      this.objects.resourcesChanged();
      const spec = this.plans.current()?.spec;
      if (spec) this.sharedChanges.watch(mirroredResources(spec));
      mirrorAll();
      this.followParams(AdmissionParams.NONE, this.params);
      this.enqueueQuotas();
    });
    // The controller's own status writes come back as events: only a new generation (a spec change) or the
    // CellSet coming or going needs a reconcile; progress is recounted on the reconciler's own interval.
    let seenGeneration: number | undefined;
    pool.cellSets.addHandler((event) => {
      const object = pool.cellSetObject();
      const generation = object?.metadata.generation;
      if (event.type === 'modified' && generation === seenGeneration) return;
      seenGeneration = generation;
      const cellSet = pool.cellSet().current;
      if (cellSet) this.plans.load(cellSet.spec, cellSet.metadata.generation ?? 0);
      cellSetChanged();
    });
    this.leases.addHandler(cellSetChanged);
    this.namespaces.onChange(({ type, name }) => {
      mirrorAll();
      // A namespace's shard-by label decides its objects' keys.
      if (type === 'modified') this.enqueueNamespace(name);
    });
    this.crds.addHandler(mirrorAll);
    pool.subscribe(this.objects);
    pool.subscribe({
      engage: (cell) => {
        statusSubresources.forget(cell.id);
        mirrorState.set(cell.id, false);
        this.mirror.enqueue({ cell: cell.id });
        this.enqueueQuotas();
        cellSetChanged();
      },
    });
  }

  /** The caches: for the life of the process, so a replica that becomes leader starts warm. */
  async runCaches(signal: AbortSignal): Promise<void> {
    await Promise.all([
      this.namespaces.run(signal),
      this.crds.run(signal),
      this.leases.run(signal),
      this.sharedChanges.run(signal),
      this.quotaObjects?.run(signal),
      this.budgets?.runCache(signal),
      this.autoscalers?.runCache(signal),
      this.claims?.runCache(signal),
    ]);
  }

  /** The controllers: while leading. */
  async runControllers(signal: AbortSignal): Promise<void> {
    for (const informer of [this.namespaces, this.crds, this.leases, this.quotaObjects])
      await informer?.waitForSync(signal);
    this.cellSets.enqueue({ name: this.pool.cellSetName });
    for (const cell of this.pool.cells()) this.mirror.enqueue({ cell: cell.id });
    this.enqueueAllObjects();
    for (const key of this.dependents.all()) this.collector.queue.add(key, 'low');
    this.cellSets.start();
    this.mirror.start();
    this.migrations.start();
    this.collector.start();
    this.followers?.start();
    this.enqueueQuotas();
    this.quotas?.start();
    await this.budgets?.start(signal);
    await this.autoscalers?.start(signal);
    await this.claims?.start(signal);
    await untilAborted(signal);
    await Promise.all([
      this.migrations.stop(10_000),
      this.collector.stop(5000),
      this.followers?.stop(5000),
      this.quotas?.stop(5000),
      this.budgets?.stop(5000),
      this.autoscalers?.stop(5000),
      this.claims?.stop(5000),
      this.mirror.stop(5000),
      this.cellSets.stop(5000),
    ]);
  }

  /** Whether the caches are listed (for /readyz). */
  readyCheck(): true | string {
    if (!this.pool.hasSynced()) return 'the CellSet and cell Secrets are not listed yet';
    if (!this.namespaces.hasSynced() || !this.leases.hasSynced())
      return 'control plane caches not listed yet';
    return true;
  }

  /**
   * Puts in the low lane every object with something to do under the current plan: bound for another cell,
   * or a copy with migration marks or outside its cell. The rest (most objects, most of the time) are not
   * queued at all, so the scan's rate limit is spent on moves.
   */
  private enqueueAllObjects(): void {
    const plan = this.plans.current();
    if (!plan) return;
    const keys = new Set<string>();
    this.objects.eachCopy((cell, ref, metadata) => {
      if (needsWork(plan, cell, ref, metadata, this.namespaceLabels)) keys.add(formatObjectKey(ref));
    });
    for (const key of keys) this.migrations.queue.add(key, 'low');
  }

  /**
   * The control plane's quotas: all of them (the cells that hold shares changed, or the cellular resources),
   * or one namespace's at once (a move into it was refused for quota).
   */
  private enqueueQuotas(namespace?: string): void {
    for (const key of this.quotaObjects?.keys() ?? []) {
      const quota = parseKey(key);
      if (namespace === undefined)
        this.quotas?.enqueue({ namespace: quota.namespace, name: quota.name }, 'low');
      else if (quota.namespace === namespace) this.quotas?.enqueue({ namespace, name: quota.name }, 'high');
    }
  }

  /** A cellular object changed in some cell: the autoscalers that name it may have to follow it. */
  private targetChanged(key: string, lane: Lane): void {
    if (!this.autoscalers) return;
    const plan = this.plans.current();
    const ref = plan && parseObjectKey(key, plan.resources);
    if (!ref) return;
    for (const name of this.autoscalerTargets.of(ref.namespace, ref.name))
      this.autoscalers.enqueue({ namespace: ref.namespace, name }, lane);
  }

  private keyNeedsWork(key: string): boolean {
    const plan = this.plans.current();
    const ref = plan && parseObjectKey(key, plan.resources);
    if (!plan || !ref) return false;
    for (const [cell, metadata] of this.objects.copiesOf(ref))
      if (needsWork(plan, cell, ref, metadata, this.namespaceLabels)) return true;
    return false;
  }

  /**
   * An object changed in some cell: if it holds owner references it is checked, and whatever holds one to it
   * is checked again (it may be the owner that went).
   */
  private ownersChanged(key: string, lane: Lane): void {
    const plan = this.plans.current();
    const ref = plan && parseObjectKey(key, plan.resources);
    if (!ref) return;
    const copies = [...this.objects.copiesOf(ref).values()];
    const owners = new Set<string>();
    for (const metadata of copies)
      for (const owner of heldOwnersOrNone(metadata.annotations))
        owners.add(ownerName(groupOf(owner.apiVersion), ref.namespace, owner.name));
    this.dependents.set(key, owners);
    const held = copies.some((metadata) =>
      metadata.finalizers?.some(
        (finalizer) => finalizer === ORPHAN_FINALIZER || finalizer === FOREGROUND_FINALIZER,
      ),
    );
    if (owners.size > 0 || held) this.collector.queue.add(key, lane);
    for (const dependent of this.dependents.dependents(
      ownerName(ref.resource.group, ref.namespace, ref.name),
    ))
      this.collector.queue.add(dependent, 'high');
  }

  /**
   * An object changed in a cell. A workload whose spec changed (a new generation: status writes do not
   * count) or that came or went queues its cell's namespace; a ConfigMap or Secret queues the cells whose
   * pod templates name it.
   */
  private followersChanged(key: string, lane: Lane, cell: string): void {
    const followers = this.followers;
    const plan = this.plans.current();
    const ref = followers && this.followerReconciler && plan && parseObjectKey(key, plan.resources);
    if (!followers || !ref) return;
    if (hasPodTemplate(ref.resource)) {
      const copy = `${cell}/${key}`;
      const generation = this.objects.copiesOf(ref).get(cell)?.generation;
      const seen = this.templateGenerations.get(copy);
      if (generation === undefined) this.templateGenerations.delete(copy);
      else this.templateGenerations.set(copy, generation);
      if (lane === 'low' || seen !== generation) followers.enqueue({ cell, namespace: ref.namespace }, lane);
      return;
    }
    const name = resourceName(ref.resource);
    if (name !== resourceName(CONFIG_MAPS) && name !== resourceName(SECRETS)) return;
    for (const follower of this.followerReconciler.cellsNaming(ref))
      followers.enqueue({ cell: follower, namespace: ref.namespace }, lane);
    // A param a binding names, new or changed: every cell needs its follower.
    const labels = this.objects.copiesOf(ref).get(cell)?.labels;
    if (this.params.names(ref.resource.resource, ref.namespace, { name: ref.name, labels }))
      for (const live of plan.liveCells) followers.enqueue({ cell: live, namespace: ref.namespace }, lane);
  }

  /** Whether the params are those of every listed policy and binding (none pending). */
  private paramsReady(): boolean {
    return (
      !this.paramsPending &&
      POLICY_KINDS.every(
        (kind) => this.sharedChanges.synced(kind.policies) && this.sharedChanges.synced(kind.bindings),
      )
    );
  }

  /**
   * An admission policy or binding changed in the control plane: if the params the bindings name changed,
   * every live cell's followers are compared again in the namespaces the old or new params are in. Once per
   * turn of the event loop, however many events the first list brings.
   */
  private paramsChanged(): void {
    if (this.paramsPending) return;
    this.paramsPending = true;
    queueMicrotask(() => {
      this.paramsPending = false;
      const kinds = POLICY_KINDS.map(({ policies, bindings }) => ({
        policies: this.sharedChanges.objects(policies),
        bindings: this.sharedChanges.objects(bindings),
      }));
      const before = this.params;
      const after = AdmissionParams.of(kinds);
      if (after.equals(before)) return;
      this.params = after;
      this.followParams(before, after);
    });
  }

  /** Queues every live cell's followers in the namespaces where params were or are. */
  private followParams(before: AdmissionParams, after: AdmissionParams): void {
    const plan = this.plans.current();
    if (!plan || !this.followers) return;
    // One scan of the cells' caches for the old wants and the new together.
    const either = new AdmissionParams([...before.wants, ...after.wants]);
    for (const namespace of either.namespaces(this.objects))
      for (const cell of plan.liveCells) this.followers.enqueue({ cell, namespace });
  }

  private enqueueNamespace(namespace: string): void {
    this.objects.eachCopy((_cell, ref) => {
      if (ref.namespace === namespace) this.migrations.enqueue(objectKeyOf(ref), 'high');
    });
  }
}
