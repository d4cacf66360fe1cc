import type { CellSetSpec } from '@cellfed/api';
import { compileCellSet, type CellSetGeneration } from '@cellfed/federation';

/** The CellSet generation the controller works to, and whether objects may move for it yet. */
export interface RebalancePlan extends CellSetGeneration {
  /**
   * Every gate has passed for this generation (cells engaged and listed, shared objects mirrored into every
   * cell, every live router routing with it): objects may move. Leftover copies are tidied either way.
   */
  readonly movesAllowed: boolean;
}

/**
 * The plan both reconcilers read, replaced as a whole: each valid generation is loaded as the CellSet
 * arrives (an invalid CellSet never replaces a valid one), the CellSet reconciler opens its gate, and
 * migrations read it per key.
 */
export class PlanHolder {
  private plan: RebalancePlan | undefined;
  private readonly listeners: (() => void)[] = [];

  /** Calls `listener` after each new generation is loaded. */
  onLoad(listener: () => void): void {
    this.listeners.push(listener);
  }

  current(): RebalancePlan | undefined {
    return this.plan;
  }

  /** Loads a validated spec; returns whether it is a new generation (whose gate is then closed). */
  load(spec: CellSetSpec, generation: number): boolean {
    if (this.plan?.generation === generation) return false;
    this.plan = { ...compileCellSet(spec, generation), movesAllowed: false };
    for (const listener of this.listeners) listener();
    return true;
  }

  /** Opens the gate of `generation`; returns false if it is not the loaded one or was already open. */
  allowMoves(generation: number): boolean {
    if (!this.plan || this.plan.generation !== generation || this.plan.movesAllowed) return false;
    this.plan = { ...this.plan, movesAllowed: true };
    return true;
  }
}
