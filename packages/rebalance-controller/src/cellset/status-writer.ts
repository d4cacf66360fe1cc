import { CELLSET_API_VERSION } from '@cellfed/api';
import { errorMessage, type Clock, type KubeClient } from '@cellfed/controller-kit';
import { MERGE_PATCH } from '@cellfed/federation';

import type { CellSetStatus } from './cellset-status.ts';

export const CELLSETS = '/apis/cells.cellfed.io/v1alpha1/cellsets';

export interface StatusWriterOptions {
  controlPlane: Pick<KubeClient, 'request'>;
  cellSetName: string;
  clock: Clock;
  /** How often a status whose counts alone changed is written. Default 2 s. */
  intervalMs?: number;
}

/**
 * The CellSet's status as the lifecycle reconciler writes it: a phase or condition change at once, a change
 * of counts alone at most every interval, nothing when nothing changed.
 */
export class StatusWriter {
  private readonly options: StatusWriterOptions;
  private last = '';
  private lastShape = '';
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(options: StatusWriterOptions) {
    this.options = options;
  }

  /**
   * Writes the status unless it is what was written last; a change of counts alone waits for the status
   * interval, and the answer is then how many milliseconds until it is due.
   */
  async write(status: CellSetStatus, signal: AbortSignal): Promise<'written' | 'unchanged' | number> {
    const text = JSON.stringify(status);
    if (text === this.last) return 'unchanged';
    const shape = shapeOf(status);
    const now = this.options.clock.now();
    const dueInMs = this.lastAt + (this.options.intervalMs ?? 2000) - now;
    if (shape === this.lastShape && dueInMs > 0) return dueInMs;
    // A merge patch keeps keys it does not mention: say null for those this status has not.
    const cleared = {
      observedGeneration: null,
      objects: null,
      cells: null,
      ratePerSecond: null,
      etaSeconds: null,
    };
    try {
      await this.options.controlPlane.request('PATCH', `${CELLSETS}/${this.options.cellSetName}/status`, {
        body: { apiVersion: CELLSET_API_VERSION, kind: 'CellSet', status: { ...cleared, ...status } },
        contentType: MERGE_PATCH,
        signal,
      });
      this.last = text;
      this.lastShape = shape;
      this.lastAt = now;
      return 'written';
    } catch (error) {
      throw new Error(`CellSet status not written: ${errorMessage(error)}`, { cause: error });
    }
  }
}

/** A status without its counts (and the condition messages that quote them): what must be written at once. */
function shapeOf(status: CellSetStatus): string {
  const { objects: _objects, cells: _cells, ratePerSecond: _rate, etaSeconds: _eta, ...rest } = status;
  return JSON.stringify({
    ...rest,
    conditions: rest.conditions?.map(({ type, status, reason, observedGeneration }) => ({
      type,
      status,
      reason,
      observedGeneration,
    })),
  });
}
