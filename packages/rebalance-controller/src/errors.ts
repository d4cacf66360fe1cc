import { CodedError } from '@cellfed/controller-kit/errors';

/** Stable codes for everything the rebalance controller fails with. */
export const RebalanceErrorCode = {
  /** The command line or configuration did not parse; the message lists every problem. */
  InvalidConfig: 'CELLFED_REBALANCE_INVALID_CONFIG',
  /** A cell the move needs is not engaged (no client yet, or it left). */
  CellNotEngaged: 'CELLFED_REBALANCE_CELL_NOT_ENGAGED',
  /** The old copy changed while it was fenced: the copy is redone. */
  ChangedWhileFenced: 'CELLFED_REBALANCE_CHANGED_WHILE_FENCED',
  /** The CellSet generation changed during a move: it starts again under the new one. */
  PlanChanged: 'CELLFED_REBALANCE_PLAN_CHANGED',
  /** A stale copy in the new cell could not be replaced yet (it is still being deleted). */
  StaleCopyInTheWay: 'CELLFED_REBALANCE_STALE_COPY_IN_THE_WAY',
  /** A cell does not enforce the write fence policy (yet): nothing moves out of it until it does. */
  FenceNotInForce: 'CELLFED_REBALANCE_FENCE_NOT_IN_FORCE',
  /** The control plane has objects of a shared resource a cell does not serve: that cell is not mirrored. */
  SharedResourceNotServed: 'CELLFED_REBALANCE_SHARED_RESOURCE_NOT_SERVED',
} as const;

export type RebalanceErrorCode = (typeof RebalanceErrorCode)[keyof typeof RebalanceErrorCode];

export class RebalanceError extends CodedError<RebalanceErrorCode> {
  override readonly name: string = 'RebalanceError';
}
