import type { CellSetReading } from '@cellfed/controller-kit';
import type { Logger } from 'pino';

import { routingState, type RoutingState } from './route-plan.ts';

/**
 * The routing state the router serves with, replaced as a whole when the CellSet changes (requests in
 * flight keep the state they started with). It follows the last good CellSet the pool read: an invalid or
 * deleted CellSet never replaces a valid one.
 */
export class RoutingStateHolder {
  private state: RoutingState | undefined;
  private problem = 'no CellSet has been read yet';
  private readonly log: Logger;

  constructor(log: Logger) {
    this.log = log;
  }

  current(): RoutingState | undefined {
    return this.state;
  }

  /** Follows a reading of the CellSet; returns whether the state changed. */
  load(reading: CellSetReading): boolean {
    if (reading.problem && reading.problem !== this.problem) {
      this.log.error({ problem: reading.problem }, 'CellSet not usable; keeping the last routing state');
    }
    this.problem = reading.problem;
    const cellSet = reading.lastGood;
    if (!cellSet) return false;
    const generation = cellSet.metadata.generation ?? 0;
    if (this.state && this.state.generation === generation) return false;
    this.state = routingState(cellSet.spec, generation);
    this.log.info(
      {
        generation,
        cells: cellSet.spec.cells.map((cell) => `${cell.id}:${cell.state}`),
        rebalancing: this.state.table.rebalancing,
      },
      'routing state loaded',
    );
    return true;
  }

  /** For /readyz: ready once a valid CellSet is loaded. */
  readyCheck(): true | string {
    return this.state ? true : this.problem;
  }
}
