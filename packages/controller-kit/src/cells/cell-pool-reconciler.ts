import type { Cell } from '@cellfed/api';
import { TerminalError, errorMessage } from '../errors.ts';
import type { CellKey } from '../object-key.ts';
import type { Reconciler, ReconcileRequest } from '../runner/reconciler.ts';
import type { CellSetReading } from './cell-set-reader.ts';

/**
 * What the reconciler reads and changes of the cell pool (CellPool implements it): declared here so that
 * the pool, which runs the reconciler, is not imported back.
 */
export interface PoolEngagements {
  readonly cellSetName: string;
  readonly credentialsNamespace: string;
  cellSet(): CellSetReading;
  secretNamespaceOf(spec: Cell): string;
  kubeconfigOf(spec: Cell): string | undefined;
  engagement(id: string): { fingerprint: string } | undefined;
  fingerprint(kubeconfig: string): string;
  engage(spec: Cell, kubeconfig: string, reason: string): void;
  disengage(id: string, reason: string): void;
  recordOnCellSet(type: 'Normal' | 'Warning', reason: string, note: string): Promise<void>;
}

/**
 * Keeps one cell's engagement in line with the CellSet and its Secret. The key names one cell. Level-based:
 * whatever happened, it compares what should be engaged (listed, with a usable kubeconfig) with what is.
 * A problem only a person can fix becomes a Warning Event on the CellSet and is not retried: the informers
 * enqueue the cell again when the CellSet or a Secret changes.
 */
export class CellPoolReconciler implements Reconciler<CellKey> {
  private readonly pool: PoolEngagements;

  constructor(pool: PoolEngagements) {
    this.pool = pool;
  }

  async reconcile({ key: { cell: id }, log }: ReconcileRequest<CellKey>): Promise<void> {
    const cellSet = this.pool.cellSet();
    if (cellSet.object === undefined) {
      this.pool.disengage(id, `CellSet ${this.pool.cellSetName} does not exist`);
      return;
    }
    if (!cellSet.current) {
      // Keep what runs: an invalid edit must not tear down working cells. The CRD's validation normally
      // rejects such an edit before it is stored.
      throw await this.problem(
        'InvalidCellSet',
        `CellSet ${this.pool.cellSetName}: ${cellSet.problem}; keeping current cells`,
      );
    }
    const spec = cellSet.current.spec.cells.find((cell) => cell.id === id);
    if (!spec) {
      this.pool.disengage(id, 'removed from the CellSet');
      return;
    }
    const kubeconfig = await this.kubeconfig(spec);
    const current = this.pool.engagement(id);
    if (current?.fingerprint === this.pool.fingerprint(kubeconfig)) return;
    try {
      this.pool.engage(spec, kubeconfig, current ? 'kubeconfig Secret changed' : 'listed in the CellSet');
    } catch (error) {
      throw await this.problem(
        'CellKubeconfigInvalid',
        `cell ${id}: the kubeconfig in its Secret is unusable: ${errorMessage(error)}`,
      );
    }
    log.debug({ state: spec.state }, 'cell engaged');
  }

  private async kubeconfig(spec: Cell): Promise<string> {
    const ref = spec.kubeconfigSecretRef;
    const namespace = this.pool.secretNamespaceOf(spec);
    if (namespace !== this.pool.credentialsNamespace) {
      throw await this.problem(
        'CellSecretNamespace',
        `cell ${spec.id}: its Secret is in namespace ${namespace}, but this component reads cell Secrets only from ${this.pool.credentialsNamespace}`,
      );
    }
    const kubeconfig = this.pool.kubeconfigOf(spec);
    if (kubeconfig === undefined) {
      throw await this.problem(
        'CellSecretMissing',
        `cell ${spec.id}: Secret ${namespace}/${ref.name} or its key "${ref.key}" does not exist`,
      );
    }
    return kubeconfig;
  }

  /** A Warning Event on the CellSet, and a TerminalError for the runner (logged, counted, not retried). */
  private async problem(reason: string, message: string): Promise<TerminalError> {
    await this.pool.recordOnCellSet('Warning', reason, message);
    return new TerminalError(message);
  }
}
