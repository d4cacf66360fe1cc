import { BACKUP_SOURCE_ANNOTATION, CELL_BACKUPS, PRIMARY_CELL_LABEL } from '@cellfed/api';
import type { Tracer } from '@opentelemetry/api';
import {
  CELL_KEYS,
  CellObjects,
  Controller,
  realClock,
  untilAborted,
  type CellPool,
  type Clock,
  type KubeClient,
  type Lane,
  type CellKey,
  NOOP_TRACER,
  ControlPlaneNamespaces,
} from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  compileCellSet,
  type CellSetGeneration,
  type ObjectMeta,
  OBJECT_KEYS,
  formatObjectKey,
  type ObjectKey,
  type CellularObjectRef,
} from '@cellfed/federation';

import { backupChange } from './backup-changes.ts';
import { BackupMetrics, LagClock } from './backup-metrics.ts';
import { BackupReconciler } from './backup-reconciler.ts';
import { AutoDownReconciler, UnhealthySince } from './auto-down-reconciler.ts';
import { prepareWhenReachable } from './cell-setup.ts';
import { DownCellReconciler } from './down-cell-reconciler.ts';

export interface BackupSettings {
  /** Mark a cell Down once it has been unhealthy this long; never when absent (an operator decides). */
  autoDownAfterMs?: number | undefined;
  /** Backups written or promoted at once. */
  workers: number;
  /** How often every object is compared with its backup although nothing changed. */
  resyncMs: number;
  /** Objects per second taken from the low-priority lane (initial lists and resyncs). */
  resyncQps: number;
}

export interface BackupControllerOptions {
  controlPlane: KubeClient;
  pool: CellPool;
  settings: BackupSettings;
  logger: Logger;
  registry: Registry;
  /** Makes a span per reconcile of every controller; none by default. */
  tracer?: Tracer;
  clock?: Clock;
}

/**
 * The backup controller's parts, wired: caches of every cell's cellular objects (whole: a backup holds the
 * object) and CellBackups (metadata), and of the control plane's namespaces (their shard-by labels), always
 * running so a new leader starts warm; and the backup controller, keyed by object, while leading.
 */
export class BackupController {
  readonly objects: CellObjects;
  readonly backups: CellObjects;
  readonly controller: Controller<ObjectKey>;
  /** Empties a Down cell that came back of its stale copies. */
  readonly downCells: Controller<CellKey>;
  /** Marks a cell Down after it has been unhealthy for `autoDownAfterMs`; absent when off. */
  readonly autoDown: Controller<CellKey> | undefined;
  private readonly namespaces: ControlPlaneNamespaces;
  private readonly pool: CellPool;
  private readonly settings: BackupSettings;
  private readonly clock: Clock;
  private federation: CellSetGeneration | undefined;

  constructor(options: BackupControllerOptions) {
    const { controlPlane, pool, settings, logger, registry } = options;
    const tracer = options.tracer ?? NOOP_TRACER;
    this.pool = pool;
    this.settings = settings;
    this.clock = options.clock ?? realClock;
    const clock = this.clock;
    const metrics = new BackupMetrics(registry);
    const lag = new LagClock();
    const promoted = new Set<string>();
    this.namespaces = new ControlPlaneNamespaces({ controlPlane, logger, registry, clock });
    const namespaceLabels = (namespace: string) => this.namespaces.labels(namespace);
    const enqueue = (key: string, lane: Lane) => this.controller.queue.add(key, lane);
    this.objects = new CellObjects({
      metadataOnly: false,
      // A backup holds its object's field managers: promoted, the object gives them back (see promote).
      keepManagedFields: true,
      logger,
      registry,
      resources: () => [...(this.federation?.resources.values() ?? [])],
    });
    this.objects.addHandler((key, lane) => {
      // An object this controller just promoted: its new backup waits behind the promotions still to do.
      if (promoted.delete(key)) {
        enqueue(key, 'low');
        return;
      }
      // A change starts the clock of its replication lag; lists and resyncs are not changes.
      if (lane === 'high') lag.seen(key, clock.now());
      enqueue(key, lane);
    });
    this.backups = new CellObjects({
      metadataOnly: true,
      logger,
      registry,
      resources: () => [CELL_BACKUPS],
    });
    this.backups.addHandler((backupKey, lane, cell) => {
      // A backup changed or appeared: look at the object it copies (a deleted one has nothing to say).
      const { namespace, name } = OBJECT_KEYS.parse(backupKey);
      const backup = this.backups.objectIn(cell, { resource: CELL_BACKUPS, namespace, name })?.metadata;
      const change = backupChange(backup, lane, (id) => this.federation?.table.stateOf(id));
      if (change) enqueue(change.key, change.lane);
    });
    this.controller = new Controller({
      name: 'backups',
      reconciler: new BackupReconciler({
        federation: () => this.federation,
        objects: this.objects,
        backups: this.backups,
        cell: (id) => pool.get(id),
        namespaceLabels,
        metrics,
        lag,
        onPromoted: (key) => promoted.add(key),
        clock,
      }),
      registry,
      tracer,
      logger,
      clock,
      workers: settings.workers,
      lowLane: { qps: settings.resyncQps, burst: Math.max(settings.resyncQps, 100) },
      backoff: { baseMs: 200, maxMs: 30_000 },
      keys: OBJECT_KEYS,
    });

    this.downCells = new Controller({
      name: 'down-cells',
      reconciler: new DownCellReconciler({
        stateOf: (cell) => this.federation?.table.stateOf(cell),
        reachable: (cell) => {
          const engaged = pool.get(cell);
          return engaged?.health === 'Healthy' ? engaged : undefined;
        },
        objectsIn: (cell) => {
          const found: { ref: CellularObjectRef; metadata: Readonly<ObjectMeta> }[] = [];
          this.objects.eachCopy((at, ref, metadata) => {
            if (at === cell) found.push({ ref, metadata });
          });
          return found;
        },
        synced: (cell) => this.objects.synced([cell]),
        metrics,
      }),
      registry,
      tracer,
      logger,
      clock,
      keys: CELL_KEYS,
    });
    const unhealthy = new UnhealthySince();
    this.autoDown =
      settings.autoDownAfterMs === undefined
        ? undefined
        : new Controller({
            name: 'auto-down',
            reconciler: new AutoDownReconciler({
              afterMs: settings.autoDownAfterMs,
              unhealthySince: (cell) => unhealthy.of(cell),
              cellSet: () => pool.cellSet(),
              controlPlane,
              record: (type, reason, note) => pool.recordOnCellSet(type, reason, note),
              clock,
            }),
            registry,
            tracer,
            logger,
            clock,
            keys: CELL_KEYS,
          });
    pool.onHealthChange((cell, health) => {
      unhealthy.changed(cell, health, clock.now());
      this.autoDown?.enqueue({ cell });
      this.downCells.enqueue({ cell });
    });

    pool.cellSets.addHandler(() => {
      const cellSet = pool.cellSet().current;
      if (!cellSet) return;
      const generation = cellSet.metadata.generation ?? 0;
      if (this.federation?.generation === generation) return;
      this.federation = compileCellSet(cellSet.spec, generation);
      this.objects.resourcesChanged();
      // The rings changed: every object's backup cell may have. A Down cell's objects wait for their
      // promotion, so theirs go first, in the high lane (those a client already waits on, marked by a
      // router before this controller saw the cell Down, in the urgent lane).
      const down = new Set(cellSet.spec.cells.filter((cell) => cell.state === 'Down').map((cell) => cell.id));
      const stateOf = (id: string) => this.federation?.table.stateOf(id);
      this.backups.eachCopy((_cell, _ref, metadata) => {
        if (!down.has(metadata.labels?.[PRIMARY_CELL_LABEL] ?? '')) return;
        const change = backupChange(metadata, 'high', stateOf);
        if (change) enqueue(change.key, change.lane);
      });
      this.enqueueAll('low');
      for (const cell of down) this.downCells.enqueue({ cell });
    });
    this.namespaces.onChange(({ type, name: namespace }) => {
      // A namespace's shard-by label decides its objects' keys, hence their backup cells.
      if (type !== 'modified') return;
      this.objects.eachCopy((_cell, ref) => {
        if (ref.namespace === namespace) enqueue(formatObjectKey(ref), 'high');
      });
    });
    pool.subscribe(this.objects);
    pool.subscribe({
      engage: (cell) => {
        this.downCells.enqueue({ cell: cell.id });
        void prepareWhenReachable(cell, logger, clock, () => {
          if (!cell.signal.aborted) this.backups.engage(cell);
        });
      },
    });
  }

  /** The caches: for the life of the process, so a replica that becomes leader starts warm. */
  async runCaches(signal: AbortSignal): Promise<void> {
    await this.namespaces.run(signal);
  }

  /** The controller: while leading, with a low-lane resync of every object every `resyncMs`. */
  async runControllers(signal: AbortSignal): Promise<void> {
    await this.namespaces.waitForSync(signal);
    this.enqueueAll('low');
    for (const cell of this.pool.cells()) {
      this.downCells.enqueue({ cell: cell.id });
      this.autoDown?.enqueue({ cell: cell.id });
    }
    const controllers = [this.controller, this.downCells, ...(this.autoDown ? [this.autoDown] : [])];
    for (const controller of controllers) controller.start();
    const resync = setInterval(() => this.enqueueAll('low'), this.settings.resyncMs);
    try {
      await untilAborted(signal);
    } finally {
      clearInterval(resync);
      await Promise.all(controllers.map((controller) => controller.stop(10_000)));
    }
  }

  /** Whether the caches are listed (for /readyz). */
  readyCheck(): true | string {
    if (!this.pool.hasSynced()) return 'the CellSet and cell Secrets are not listed yet';
    if (!this.namespaces.hasSynced()) return 'control plane namespaces not listed yet';
    if (!this.federation) return 'no valid CellSet loaded yet';
    return true;
  }

  /** Every object with a copy or a backup in some cell. */
  private enqueueAll(lane: Lane): void {
    const keys = new Set<string>();
    this.objects.eachCopy((_cell, ref) => keys.add(formatObjectKey(ref)));
    this.backups.eachCopy((_cell, _ref, metadata) => {
      const key = metadata.annotations?.[BACKUP_SOURCE_ANNOTATION];
      if (key) keys.add(key);
    });
    for (const key of keys) this.controller.queue.add(key, lane);
  }
}
