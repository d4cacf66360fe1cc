import { CELLSET_API_VERSION } from '@cellfed/api';
import {
  realClock,
  type CellHealth,
  type CellSetReading,
  type Clock,
  type KubeClient,
  type CellKey,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@cellfed/controller-kit';
import { MERGE_PATCH, type KubeObject } from '@cellfed/federation';

export interface AutoDownReconcilerOptions {
  /** How long a cell must stay Unhealthy before it is marked Down. */
  afterMs: number;
  /** Since when each cell has been Unhealthy without a break; absent when it is not. */
  unhealthySince: (cell: string) => number | undefined;
  /** The CellSet as the pool read it. */
  cellSet: () => CellSetReading;
  controlPlane: Pick<KubeClient, 'request'>;
  /** Records an Event on the CellSet. */
  record: (type: 'Normal' | 'Warning', reason: string, note: string) => Promise<void>;
  clock?: Clock;
}

/**
 * Marks a cell `Down` in the CellSet once its health probe has failed for `afterMs` without a break (the
 * pool's health already needs several failed probes in a row, so one lost probe does not count; this is the
 * second, longer hysteresis). Off unless configured: an operator usually decides. Never marks the last
 * Normal cell Down. The write carries the CellSet's resourceVersion, so a concurrent edit wins and this looks
 * again. Keyed by the cell.
 */
export class AutoDownReconciler implements Reconciler<CellKey> {
  private readonly options: AutoDownReconcilerOptions;
  private readonly clock: Clock;

  constructor(options: AutoDownReconcilerOptions) {
    this.options = options;
    this.clock = options.clock ?? realClock;
  }

  async reconcile({ key: { cell }, signal, log }: ReconcileRequest<CellKey>): Promise<ReconcileResult> {
    const since = this.options.unhealthySince(cell);
    if (since === undefined) return {};
    const waited = this.clock.now() - since;
    if (waited < this.options.afterMs) return { requeueAfterMs: this.options.afterMs - waited };
    // Only a valid stored CellSet is written to: an invalid edit is the operator's to fix first.
    const { current, object: stored } = this.options.cellSet();
    if (!current || !stored) return {};
    const object = stored as KubeObject;
    const cells = current.spec.cells;
    const entry = cells.find((candidate) => candidate.id === cell);
    if (!entry || entry.state === 'Down') return {};
    if (!cells.some((other) => other.id !== cell && other.state === 'Normal')) {
      await this.options.record(
        'Warning',
        'CellNotMarkedDown',
        `cell ${cell} has been unhealthy for ${Math.round(waited / 1000)} s but is the last Normal cell`,
      );
      return {};
    }
    const spec = (object as unknown as { spec: { cells: { id: string; state: string }[] } }).spec;
    await this.options.controlPlane.request(
      'PATCH',
      `/apis/${CELLSET_API_VERSION}/cellsets/${object.metadata.name}`,
      {
        body: {
          metadata: { resourceVersion: object.metadata.resourceVersion },
          spec: { cells: spec.cells.map((one) => (one.id === cell ? { ...one, state: 'Down' } : one)) },
        },
        contentType: MERGE_PATCH,
        signal,
      },
    );
    log.warn({ cell, unhealthySeconds: Math.round(waited / 1000) }, 'cell marked Down');
    await this.options.record(
      'Warning',
      'CellMarkedDown',
      `cell ${cell} has been unhealthy for ${Math.round(waited / 1000)} s: marked Down; its keys are served from their backups`,
    );
    return {};
  }
}

/** Since when each cell has been Unhealthy without a break, from the pool's health changes. */
export class UnhealthySince {
  private readonly since = new Map<string, number>();

  changed(cell: string, health: CellHealth, now: number): void {
    if (health === 'Unhealthy') {
      if (!this.since.has(cell)) this.since.set(cell, now);
    } else this.since.delete(cell);
  }

  of(cell: string): number | undefined {
    return this.since.get(cell);
  }
}
