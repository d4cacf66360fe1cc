import type { CellSetSpec } from '@cellfed/api';
import { HashRing, planMigration } from '@cellfed/hashing';
import { CellsCliError, CellsCliErrorCode } from './errors.ts';

/** A change of the CellSet's cells a plan is asked about. */
export type CellChange =
  | { kind: 'add'; id: string; weight: number }
  | { kind: 'drain'; id: string }
  | { kind: 'weight'; id: string; weight: number };

export interface ChangePlan {
  /** Objects counted (every cellular object the router lists). */
  total: number;
  moved: number;
  /** The fewest moves any placement could make for the change. */
  optimal: number;
  cells: { id: string; before: number; after: number; in: number; out: number }[];
  flows: { from: string; to: string; count: number }[];
}

/**
 * What `change` would move, object by object, from the cells as they are (CurrentCells) to the cells after
 * it: counts per cell and per flow, beside the optimum. Reads nothing: the caller gives the objects' keys.
 */
export function planChange(spec: CellSetSpec, change: CellChange, keys: readonly string[]): ChangePlan {
  const live = spec.cells.filter((cell) => cell.state === 'Normal' || cell.state === 'Draining');
  const known = spec.cells.find((cell) => cell.id === change.id);
  if (change.kind === 'add' && known)
    throw new CellsCliError(
      CellsCliErrorCode.InvalidChange,
      `cell ${change.id} is already in the CellSet (${known.state})`,
    );
  if (change.kind !== 'add' && !live.some((cell) => cell.id === change.id))
    throw new CellsCliError(
      CellsCliErrorCode.InvalidChange,
      `cell ${change.id} holds no objects now (it is ${known ? known.state : 'not in the CellSet'})`,
    );
  const before = live.map((cell) => ({ id: cell.id, weight: cell.weight }));
  const after =
    change.kind === 'add'
      ? [...before, { id: change.id, weight: change.weight }]
      : change.kind === 'drain'
        ? before.filter((cell) => cell.id !== change.id)
        : before.map((cell) => (cell.id === change.id ? { ...cell, weight: change.weight } : cell));
  if (after.length === 0)
    throw new CellsCliError(CellsCliErrorCode.InvalidChange, `draining ${change.id} would leave no cell`);
  const plan = planMigration(keys, HashRing.build(before), HashRing.build(after), { includeMoves: false });
  return {
    total: keys.length,
    moved: plan.moved,
    optimal: Math.round(plan.optimalMoved),
    cells: plan.cells.map((cell) => ({
      id: cell.id,
      before: cell.before,
      after: cell.after,
      in: cell.movingIn,
      out: cell.movingOut,
    })),
    flows: plan.flows.map((flow) => ({ from: flow.from, to: flow.to, count: flow.count })),
  };
}
