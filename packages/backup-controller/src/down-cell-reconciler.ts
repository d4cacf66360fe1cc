import {
  isNotFound,
  type KubeClient,
  type CellKey,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@cellfed/controller-kit';
import type { CellState } from '@cellfed/hashing';
import { type ObjectMeta, isCellOwnObject, objectPath, type CellularObjectRef } from '@cellfed/federation';

import type { BackupMetrics } from './backup-metrics.ts';

/** How often a Down cell is looked at again while it is unreachable or still holds copies. */
const RECHECK_MS = 5000;

export interface DownCellReconcilerOptions {
  /** A cell's state in the CellSet the controller works to. */
  stateOf: (cell: string) => CellState | undefined;
  /** An engaged, reachable cell's client; undefined while it is not. */
  reachable: (cell: string) => { client: Pick<KubeClient, 'request'> } | undefined;
  /** Every cached cellular object of one cell, as references with their metadata. */
  objectsIn: (cell: string) => { ref: CellularObjectRef; metadata: Readonly<ObjectMeta> }[];
  /** Whether that cell's caches are listed (an empty unlisted cache proves nothing). */
  synced: (cell: string) => boolean;
  metrics: BackupMetrics;
}

/**
 * A `Down` cell is never trusted again: its keys were promoted elsewhere from their backups, so whatever it
 * still holds is stale. Once it is reachable (it came back with its data) every cellular object in it is
 * deleted, so that when an operator lets it rejoin (`Joining`) nothing old in it can be served or copied; the
 * rebalance controller then moves its keys back from the current copies. Keyed by the cell.
 */
export class DownCellReconciler implements Reconciler<CellKey> {
  private readonly options: DownCellReconcilerOptions;

  constructor(options: DownCellReconcilerOptions) {
    this.options = options;
  }

  async reconcile({ key: { cell }, signal, log }: ReconcileRequest<CellKey>): Promise<ReconcileResult> {
    if (this.options.stateOf(cell) !== 'Down') return {};
    const engaged = this.options.reachable(cell);
    if (!engaged || !this.options.synced(cell)) return { requeueAfterMs: RECHECK_MS };
    const stale = this.options.objectsIn(cell).filter(({ ref }) => !isCellOwnObject(ref));
    if (stale.length === 0) return {};
    for (const { ref, metadata } of stale) {
      try {
        await engaged.client.request(
          'DELETE',
          objectPath(ref),
          // Only the copy the cache saw: an object created since (by a rejoin) is not this one.
          { body: { preconditions: { uid: metadata.uid } }, signal },
        );
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      this.options.metrics.operations.inc({ operation: 'purged' });
    }
    log.info({ cell, objects: stale.length }, 'stale copies deleted from a Down cell that came back');
    // Look again: the cache shows the deletions, or what is still there.
    return { requeueAfterMs: RECHECK_MS };
  }
}
