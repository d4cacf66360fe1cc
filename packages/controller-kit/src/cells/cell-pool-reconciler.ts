import { safeParseCellSet, type Cell } from '@cellfed/hashing';

import { TerminalError, errorMessage } from '../errors.ts';
import type { Reconciler, ReconcileRequest } from '../runner/reconciler.ts';
import type { CellPool } from './cell-pool.ts';

/**
 * Keeps one cell's engagement in line with the CellSet and its Secret. The key is a cell id. Level-based:
 * whatever happened, it compares what should be engaged (listed, with a usable kubeconfig) with what is.
 */
export class CellPoolReconciler implements Reconciler {
  private readonly pool: CellPool;

  constructor(pool: CellPool) {
    this.pool = pool;
  }

  async reconcile({ key: id, log }: ReconcileRequest): Promise<void> {
    const object = this.pool.cellSetObject();
    if (!object) {
      this.pool.disengage(id, `CellSet ${this.pool.cellSetName} does not exist`);
      return;
    }
    const parsed = safeParseCellSet(object);
    if (!parsed.success) {
      // Keep what runs: an invalid edit must not tear down working cells. The CellSet's own validation
      // (CRD schema) normally rejects such an edit before it is stored.
      const problems = parsed.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
      throw new TerminalError(
        `CellSet ${this.pool.cellSetName} is invalid, keeping current cells: ${problems}`,
      );
    }
    const spec = parsed.data.spec.cells.find((cell) => cell.id === id);
    if (!spec) {
      this.pool.disengage(id, 'removed from the CellSet');
      return;
    }
    const kubeconfig = this.kubeconfig(spec);
    const current = this.pool.engagement(id);
    if (current?.fingerprint === this.pool.fingerprint(kubeconfig)) return;
    try {
      this.pool.engage(spec, kubeconfig, current ? 'kubeconfig Secret changed' : 'listed in the CellSet');
    } catch (error) {
      throw new TerminalError(`cell ${id}: kubeconfig in its Secret is unusable: ${errorMessage(error)}`);
    }
    log.debug({ state: spec.state }, 'cell engaged');
  }

  private kubeconfig(spec: Cell): string {
    const ref = spec.kubeconfigSecretRef;
    if (ref.namespace !== this.pool.secretNamespace) {
      throw new TerminalError(
        `cell ${spec.id}: its Secret is in namespace ${ref.namespace}, but cell Secrets are read only from ${this.pool.secretNamespace}`,
      );
    }
    const kubeconfig = this.pool.kubeconfigOf(spec);
    if (kubeconfig === undefined) {
      // No retry needed: the Secret informer enqueues the cell when the Secret appears or changes.
      throw new TerminalError(
        `cell ${spec.id}: Secret ${ref.namespace}/${ref.name} or its key "${ref.key}" does not exist`,
      );
    }
    return kubeconfig;
  }
}
