import { DEFAULT_RETRY_AFTER_SECONDS } from '@cellfed/hashing';

import type { RoutePlan } from './route-plan.ts';
import { tooManyRequests } from '../status/kube-status.ts';
import type { FromBackup, Refusal } from './destination.ts';

/** A request for one cellular object, as planned. */
export type ObjectPlan = Extract<RoutePlan, { kind: 'object' }>;

/** Seconds a write to an object being restored from its backup is told to wait. */
const RESTORE_RETRY_AFTER_SECONDS = 1;

/**
 * The cell a request was planned with left the federation meanwhile: like a fenced write, the client
 * retries by itself and is routed with the CellSet as it is now.
 */
export function cellLeftRefusal(plan: ObjectPlan, cell: string): Refusal {
  const status = tooManyRequests(
    `cell ${cell} left the federation while the request was routed; retry`,
    DEFAULT_RETRY_AFTER_SECONDS,
    plan.info.name,
  );
  return {
    kind: 'refuse',
    status,
    cell,
    route: 'cell-left',
    routeCase: plan.decision.case,
    headers: { 'retry-after': String(DEFAULT_RETRY_AFTER_SECONDS) },
  };
}

/**
 * A write to an object in the middle of a move: fenced by the router on the label it read, or by the cell
 * (`cell-fence`) when the move began after that reading. Clients retry it by themselves.
 */
export function fenceRefusal(
  plan: ObjectPlan,
  cell: string,
  route: string,
  routeCase: number | undefined,
  retryAfterSeconds = DEFAULT_RETRY_AFTER_SECONDS,
): Refusal {
  const { info, decision } = plan;
  const status = tooManyRequests(
    decision.oldCell === decision.newCell
      ? `${info.resource} "${info.name}" is moving out of cell ${cell}; retry shortly`
      : `${info.resource} "${info.name}" is moving from cell ${decision.oldCell} to ${decision.newCell}; retry shortly`,
    retryAfterSeconds,
    info.name,
  );
  return {
    kind: 'refuse',
    status,
    cell,
    route,
    ...(routeCase === undefined ? {} : { routeCase }),
    fenced: true,
    headers: { 'retry-after': String(retryAfterSeconds) },
  };
}

/**
 * A write (or anything but a plain read) of an object whose backup is not promoted yet: retried by the client
 * as a fenced write is, until the backup controller has created the real object and committed it.
 */
export function restoringRefusal(
  plan: ObjectPlan,
  destination: Pick<FromBackup, 'cell' | 'routeCase'>,
): Refusal {
  const status = tooManyRequests(
    `${plan.info.resource} "${plan.info.name}" is being restored in cell ${destination.cell} from its backup (cell ${plan.failedOverFrom ?? ''} is down); retry shortly`,
    RESTORE_RETRY_AFTER_SECONDS,
    plan.info.name,
  );
  return {
    kind: 'refuse',
    status,
    cell: destination.cell,
    route: 'failover-restoring',
    ...(destination.routeCase === undefined ? {} : { routeCase: destination.routeCase }),
    fenced: true,
    headers: { 'retry-after': String(RESTORE_RETRY_AFTER_SECONDS) },
  };
}
