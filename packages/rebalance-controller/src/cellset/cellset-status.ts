import type { Progress } from './progress.ts';

type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A Kubernetes condition (metav1.Condition). */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type RebalancePhase = 'Stable' | 'Rebalancing' | 'Blocked' | 'Invalid';

/** What the controller writes to `CellSet.status`. */
export interface CellSetStatus {
  observedGeneration?: number;
  phase: RebalancePhase;
  objects?: {
    total: number;
    toMove: number;
    moved: number;
    pending: number;
    inFlight: number;
  };
  cells?: { id: string; state: string; objects: number; movingIn: number; movingOut: number }[];
  /** Objects moved per second over the last half minute. */
  ratePerSecond?: number;
  /** Seconds until every pending object has moved, at that rate. */
  etaSeconds?: number;
  /** The last rebalance that finished. */
  lastRebalance?: LastRebalance;
  conditions: Condition[];
}

export interface LastRebalance {
  /** The CellSet generation it moved objects for. */
  generation: number;
  moved: number;
  /** From the gate opening to nothing left to move, when this controller saw both. */
  seconds?: number;
  finishedAt: string;
}

/**
 * Sets one condition in a list, keeping its `lastTransitionTime` when its status does not change (as
 * apimachinery's meta.SetStatusCondition does).
 */
export function setCondition(
  conditions: readonly Condition[],
  next: Omit<Condition, 'lastTransitionTime'>,
  now: number,
): Condition[] {
  const existing = conditions.find((condition) => condition.type === next.type);
  const lastTransitionTime =
    existing && existing.status === next.status ? existing.lastTransitionTime : new Date(now).toISOString();
  return [
    ...conditions.filter((condition) => condition.type !== next.type),
    { ...next, lastTransitionTime },
  ].sort((a, b) => a.type.localeCompare(b.type));
}

/** The progress part of the status, with rate and ETA when a rate is known. */
export function progressStatus(
  progress: Progress,
  ratePerSecond: number | undefined,
): Pick<CellSetStatus, 'objects' | 'cells' | 'ratePerSecond' | 'etaSeconds'> {
  const { total, toMove, moved, pending, inFlight } = progress;
  return {
    objects: { total, toMove, moved, pending, inFlight },
    cells: progress.cells.map(({ id, state, objects, movingIn, movingOut }) => ({
      id,
      state,
      objects,
      movingIn,
      movingOut,
    })),
    ...(ratePerSecond === undefined ? {} : { ratePerSecond: Math.round(ratePerSecond * 10) / 10 }),
    ...(ratePerSecond && ratePerSecond > 0 && pending > 0
      ? { etaSeconds: Math.ceil(pending / ratePerSecond) }
      : {}),
  };
}

/** A CellSet cell as stored (unknown fields kept). */
export interface StoredCell {
  id: string;
  state: string;
  [field: string]: unknown;
}

/**
 * The cells once nothing is left to move: Joining cells become Normal, Draining cells leave, a changed weight
 * is the weight (its previousWeight goes). Returns the
 * new list and the ids of the cells that left.
 */
export function finishedCells(cells: readonly StoredCell[]): { cells: StoredCell[]; removed: StoredCell[] } {
  return {
    cells: cells
      .filter((cell) => cell.state !== 'Draining')
      .map(({ previousWeight: _placedBy, ...cell }) =>
        cell.state === 'Joining' ? { ...cell, state: 'Normal' } : cell,
      ),
    removed: cells.filter((cell) => cell.state === 'Draining'),
  };
}

/** Why objects may not move for a generation yet: the CellSet's Blocked condition says it. */
export interface Gate {
  readonly reason: 'CellsNotReady' | 'MirrorPending' | 'RoutersBehind' | 'PromotionsPending';
  readonly message: string;
}

/** The Rebalancing and Blocked conditions of where a generation stands. */
export function rebalanceConditions(
  conditions: Condition[],
  stand: {
    readonly generation: number;
    readonly rebalancing: boolean;
    readonly gate: Gate | undefined;
    readonly progress: Pick<Progress, 'moved' | 'toMove' | 'inFlight'>;
  },
  now: number,
): Condition[] {
  const { generation: observedGeneration, rebalancing, gate, progress } = stand;
  const moving = setCondition(
    conditions,
    rebalancing
      ? {
          type: 'Rebalancing',
          status: 'True',
          reason: gate ? 'Waiting' : 'Moving',
          message: `${progress.moved} of ${progress.toMove} objects moved, ${progress.inFlight} in flight`,
          observedGeneration,
        }
      : {
          type: 'Rebalancing',
          status: 'False',
          reason: 'Balanced',
          message: 'every object is in the cell the ring names',
          observedGeneration,
        },
    now,
  );
  return setCondition(
    moving,
    gate
      ? { type: 'Blocked', status: 'True', reason: gate.reason, message: gate.message, observedGeneration }
      : { type: 'Blocked', status: 'False', reason: 'NotBlocked', message: '', observedGeneration },
    now,
  );
}
