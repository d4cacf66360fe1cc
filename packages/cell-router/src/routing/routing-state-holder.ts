import { safeParseCellSet } from '@cellfed/hashing';
import type { Logger } from 'pino';

import { routingState, type RoutingState } from './route-plan.ts';

/**
 * The routing state the router serves with, replaced as a whole when the CellSet changes (requests in
 * flight keep the state they started with). An invalid CellSet never replaces a valid one.
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

  /** Loads a CellSet object (or its absence); returns whether the state changed. */
  load(object: unknown): boolean {
    if (object === undefined) {
      this.problem = 'the CellSet does not exist';
      this.log.warn('CellSet not found; keeping the last routing state');
      return false;
    }
    const parsed = safeParseCellSet(object);
    if (!parsed.success) {
      this.problem = `the CellSet is invalid: ${parsed.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`;
      this.log.error({ problem: this.problem }, 'invalid CellSet; keeping the last routing state');
      return false;
    }
    const generation = parsed.data.metadata.generation ?? 0;
    if (this.state && this.state.generation === generation) return false;
    this.state = routingState(parsed.data.spec, generation);
    this.problem = '';
    this.log.info(
      {
        generation,
        cells: parsed.data.spec.cells.map((cell) => `${cell.id}:${cell.state}`),
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
