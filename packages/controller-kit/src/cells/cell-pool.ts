import {
  CELLSET_API_VERSION,
  CELLSET_KIND,
  DEFAULT_CELLSET_NAME,
  DEFAULT_SECRET_NAMESPACE,
  type Cell,
} from '@cellfed/api';
import type { Tracer } from '@opentelemetry/api';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';

import type { Logger } from 'pino';
import type { Gauge, Registry } from 'prom-client';
import { SECRETS, type KubeObject } from '@cellfed/federation';

import { realClock, untilAborted, type Clock } from '../clock.ts';
import { errorMessage } from '../errors.ts';
import { Informer } from '../informer/informer.ts';
import { resourceListWatch } from '../informer/list-watch.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import { KubeClient } from '../kube/kube-client.ts';
import { gauge } from '../metrics/registry-metrics.ts';
import { CELL_KEYS, CONTROL_PLANE, formatKey, type CellKey } from '../object-key.ts';
import { Controller } from '../runner/controller.ts';
import { CellPoolReconciler, type PoolEngagements } from './cell-pool-reconciler.ts';
import { CellSetReader, type CellSetReading } from './cell-set-reader.ts';
import type { CellHealth } from './health-hysteresis.ts';
import { probeCell, type ProbeOptions } from './health-probe.ts';

/** A cell the pool has a client for. Work for it must stop when `signal` aborts. */
export interface EngagedCell {
  readonly id: string;
  readonly client: KubeClient;
  /** The cell's entry in the CellSet when it was engaged (state and weight may have changed since). */
  readonly spec: Cell;
  /** Aborted when the cell is disengaged, or recreated after a Secret change or a connectivity loss. */
  readonly signal: AbortSignal;
  readonly health: CellHealth;
}

/**
 * Something that works per cell (multicluster-runtime's `Aware`): `engage` starts its informers for the
 * cell and must stop them when `cell.signal` aborts. A throw is logged and does not affect other cells.
 */
export interface CellAware {
  engage(cell: EngagedCell): void | Promise<void>;
}

export interface CellPoolOptions {
  /** The router control plane, where the CellSet and the cells' Secrets live. */
  controlPlane: KubeClient;
  logger: Logger;
  registry: Registry;
  /** Makes a span per reconcile of the pool's controller; none by default. */
  tracer?: Tracer;
  clock?: Clock;
  /** Default `default`. */
  cellSetName?: string;
  /**
   * The only namespace cell Secrets are read from (least privilege): this component's own, where a cell's
   * Secret reference names none. Default `cellfed-system`.
   */
  credentialsNamespace?: string;
  probe?: ProbeOptions;
  /** Names this process in the Events it records (`reportingInstance`). Default: the host name. */
  instance?: string;
  /** Builds a cell's client from its kubeconfig; tests substitute it. */
  clientFor?: (kubeconfig: string, cellId: string) => KubeClient;
}

interface Engagement {
  cell: EngagedCell & { health: CellHealth };
  fingerprint: string;
  abort: AbortController;
}

const CELLSETS = { group: 'cells.cellfed.io', version: 'v1alpha1', resource: 'cellsets', namespaced: false };

/**
 * The cells of the federation as live clients (one manager per member cluster, created and stopped
 * at run time from cluster Secrets: docs/design.md, [T2]). It watches the CellSet and the cells'
 * kubeconfig Secrets in the control plane and, through its own controller keyed by cell id, engages a cell when it appears,
 * disengages it when it goes and recreates it when its Secret changes. A `/readyz` probe per cell publishes
 * health and, when a cell comes back from Unhealthy, recreates its engagement so every watch starts afresh.
 */
export class CellPool implements PoolEngagements {
  readonly cellSetName: string;
  readonly credentialsNamespace: string;
  readonly cellSets: Informer;
  readonly secrets: Informer;
  readonly events: EventRecorder;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly probe: ProbeOptions;
  private readonly clientFor: (kubeconfig: string, cellId: string) => KubeClient;
  private readonly controller: Controller<CellKey>;
  private readonly engaged = new Map<string, Engagement>();
  private readonly cellSetReader = new CellSetReader();
  private readonly subscribers: CellAware[] = [];
  private readonly healthListeners = new Set<(cell: string, health: CellHealth) => void>();
  private readonly healthGauge: Gauge<'cell'>;
  private readonly engagedGauge: Gauge;

  constructor(options: CellPoolOptions) {
    this.cellSetName = options.cellSetName ?? DEFAULT_CELLSET_NAME;
    this.credentialsNamespace = options.credentialsNamespace ?? DEFAULT_SECRET_NAMESPACE;
    this.log = options.logger.child({ component: 'cell-pool' });
    this.clock = options.clock ?? realClock;
    this.probe = options.probe ?? {};
    this.clientFor = options.clientFor ?? ((kubeconfig) => KubeClient.fromKubeconfig(kubeconfig));
    this.events = new EventRecorder({
      client: options.controlPlane,
      controller: 'cellfed.io/cell-pool',
      instance: options.instance ?? hostname(),
      logger: this.log,
      clock: this.clock,
    });
    const common = {
      cell: CONTROL_PLANE,
      logger: options.logger,
      registry: options.registry,
      clock: this.clock,
    };
    this.cellSets = new Informer({
      ...common,
      resource: 'cells.cellfed.io/v1alpha1/cellsets',
      listWatch: resourceListWatch(options.controlPlane, CELLSETS, {
        fieldSelector: `metadata.name=${this.cellSetName}`,
      }),
    });
    this.secrets = new Informer({
      ...common,
      resource: 'v1/secrets',
      listWatch: resourceListWatch(options.controlPlane, SECRETS, { namespace: this.credentialsNamespace }),
    });
    this.controller = new Controller({
      name: 'cell-pool',
      reconciler: new CellPoolReconciler(this),
      registry: options.registry,
      logger: options.logger,
      clock: this.clock,
      keys: CELL_KEYS,
      backoff: { baseMs: 500, maxMs: 60_000 },
      ...(options.tracer ? { tracer: options.tracer } : {}),
    });
    // Few cells: any change to the CellSet or a Secret re-examines every cell, listed or engaged.
    const enqueueAll = () => {
      for (const id of [...this.listedCellIds(), ...this.engaged.keys()])
        this.controller.enqueue({ cell: id });
    };
    this.cellSets.addHandler(enqueueAll);
    this.secrets.addHandler(enqueueAll);
    this.healthGauge = gauge(
      options.registry,
      'cellfed_cell_healthy',
      "1 if the cell's /readyz probe passes, 0 if not",
      ['cell'],
    );
    this.engagedGauge = gauge(
      options.registry,
      'cellfed_cells_engaged',
      'Cells with a live client and informers',
      [],
    );
    this.engagedGauge.set(0);
  }

  /** Runs until `signal` aborts, then disengages every cell. */
  async run(signal: AbortSignal): Promise<void> {
    const informers = [this.cellSets.run(signal), this.secrets.run(signal)];
    // As controller-runtime does: no reconcile before the caches are filled, or a cell whose Secret is
    // simply not listed yet would look like a cell without one.
    if ((await this.cellSets.waitForSync(signal)) && (await this.secrets.waitForSync(signal)))
      this.controller.start();
    await untilAborted(signal);
    await this.controller.stop(5000);
    for (const id of [...this.engaged.keys()]) this.disengage(id, 'shutdown');
    await Promise.all(informers);
  }

  /** True once the CellSet and Secrets are cached (cells may still be connecting). */
  hasSynced(): boolean {
    return this.cellSets.hasSynced() && this.secrets.hasSynced();
  }

  /** Engages `aware` with every cell now and every cell engaged later. */
  subscribe(aware: CellAware): void {
    this.subscribers.push(aware);
    for (const engagement of this.engaged.values()) void this.engageOne(aware, engagement.cell);
  }

  /** Calls `listener` on every change of a cell's health; returns the unsubscribe function. */
  onHealthChange(listener: (cell: string, health: CellHealth) => void): () => void {
    this.healthListeners.add(listener);
    return () => this.healthListeners.delete(listener);
  }

  get(id: string): EngagedCell | undefined {
    return this.engaged.get(id)?.cell;
  }

  cells(): EngagedCell[] {
    return Array.from(this.engaged.values(), (engagement) => engagement.cell);
  }

  /** The raw CellSet object as cached, or undefined: its status and uid. The spec is {@link cellSet}'s. */
  cellSetObject(): KubeObject | undefined {
    return this.cellSets.get(formatKey({ cell: CONTROL_PLANE, namespace: '', name: this.cellSetName }));
  }

  /** The CellSet as validated (once per stored version), with the last good one kept. */
  cellSet(): CellSetReading {
    return this.cellSetReader.read(this.cellSetObject());
  }

  /** Records an Event about the CellSet (what `kubectl describe cellset` shows). */
  recordOnCellSet(type: 'Normal' | 'Warning', reason: string, note: string): Promise<void> {
    const uid = this.cellSetObject()?.metadata.uid;
    return this.events.record(
      {
        apiVersion: CELLSET_API_VERSION,
        kind: CELLSET_KIND,
        name: this.cellSetName,
        ...(uid ? { uid } : {}),
      },
      type,
      reason,
      note,
    );
  }

  /** The cached Secret, or undefined. */
  secret(namespace: string, name: string): KubeObject | undefined {
    return this.secrets.get(formatKey({ cell: CONTROL_PLANE, namespace, name }));
  }

  /** What a reconcile needs to know about the current engagement of a cell. */
  engagement(id: string): { fingerprint: string } | undefined {
    const engagement = this.engaged.get(id);
    return engagement ? { fingerprint: engagement.fingerprint } : undefined;
  }

  /** Engages (or re-engages with new credentials) `spec` with the kubeconfig text. Throws if it is unusable. */
  engage(spec: Cell, kubeconfig: string, reason: string): void {
    const fingerprint = fingerprintOf(kubeconfig);
    const client = this.clientFor(kubeconfig, spec.id);
    if (this.engaged.has(spec.id)) this.disengage(spec.id, reason);
    this.start(spec, client, fingerprint, reason);
  }

  disengage(id: string, reason: string): void {
    const engagement = this.engaged.get(id);
    if (!engagement) return;
    this.engaged.delete(id);
    engagement.abort.abort(new Error(`cell ${id} disengaged: ${reason}`));
    void engagement.cell.client.close();
    this.healthGauge.remove({ cell: id });
    this.engagedGauge.set(this.engaged.size);
    this.log.info({ cell: id, reason }, 'cell disengaged');
    void this.recordOnCellSet('Normal', 'CellDisengaged', `cell ${id} disengaged: ${reason}`);
  }

  fingerprint(kubeconfig: string): string {
    return fingerprintOf(kubeconfig);
  }

  private listedCellIds(): string[] {
    const cells = (this.cellSetObject()?.spec as { cells?: { id?: unknown }[] } | undefined)?.cells ?? [];
    return cells.map((cell) => cell.id).filter((id): id is string => typeof id === 'string');
  }

  private start(spec: Cell, client: KubeClient, fingerprint: string, reason: string): void {
    const abort = new AbortController();
    const cell = { id: spec.id, client, spec, signal: abort.signal, health: 'Unknown' as CellHealth };
    const engagement: Engagement = { cell, fingerprint, abort };
    this.engaged.set(spec.id, engagement);
    this.engagedGauge.set(this.engaged.size);
    this.log.info({ cell: spec.id, reason, server: client.server }, 'cell engaged');
    void this.recordOnCellSet(
      'Normal',
      'CellEngaged',
      `cell ${spec.id} engaged (${reason}): ${client.server}`,
    );
    const log = this.log.child({ cell: spec.id });
    void probeCell(client, {
      ...this.probe,
      clock: this.clock,
      log,
      signal: abort.signal,
      onChange: (health) => this.healthChanged(engagement, health),
      // Its storage was replaced (a wiped cell rebuilt under its id): every cache of it starts afresh.
      onReplaced: () => this.restart(engagement, 'its storage was replaced'),
    });
    for (const aware of this.subscribers) void this.engageOne(aware, cell);
  }

  private healthChanged(engagement: Engagement, health: CellHealth): void {
    const previous = engagement.cell.health;
    engagement.cell.health = health;
    this.healthGauge.set({ cell: engagement.cell.id }, health === 'Healthy' ? 1 : 0);
    for (const listener of this.healthListeners) {
      try {
        listener(engagement.cell.id, health);
      } catch (error) {
        this.log.error({ cell: engagement.cell.id, err: errorMessage(error) }, 'health listener threw');
      }
    }
    // Back from a connectivity loss: watches may hang on dead connections; start everything afresh.
    if (previous === 'Unhealthy' && health === 'Healthy')
      this.restart(engagement, 'recovered from a connectivity loss');
  }

  /** Recreates a cell's engagement (if it is still the current one), so every watch of it starts afresh. */
  private restart(engagement: Engagement, reason: string): void {
    if (this.engaged.get(engagement.cell.id) !== engagement) return;
    const kubeconfig = this.kubeconfigOf(engagement.cell.spec);
    if (kubeconfig === undefined) this.controller.enqueue({ cell: engagement.cell.id });
    else this.engage(engagement.cell.spec, kubeconfig, reason);
  }

  /** Where a cell's Secret is: the namespace its reference names, else this component's own. */
  secretNamespaceOf(spec: Cell): string {
    return spec.kubeconfigSecretRef.namespace ?? this.credentialsNamespace;
  }

  /** The kubeconfig text in a cell's Secret, if the Secret and its key exist. */
  kubeconfigOf(spec: Cell): string | undefined {
    const ref = spec.kubeconfigSecretRef;
    const data = (this.secret(this.secretNamespaceOf(spec), ref.name)?.data ?? {}) as Record<string, string>;
    const encoded = data[ref.key];
    return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
  }

  private async engageOne(aware: CellAware, cell: EngagedCell): Promise<void> {
    try {
      await aware.engage(cell);
    } catch (error) {
      this.log.error(
        { cell: cell.id, err: errorMessage(error) },
        'engaging a subscriber with the cell failed',
      );
    }
  }
}

function fingerprintOf(kubeconfig: string): string {
  return createHash('sha256').update(kubeconfig).digest('hex').slice(0, 16);
}
