import { REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import {
  type ObjectMeta,
  isCellOwnObject,
  madeByItsCell,
  type CellularObjectRef,
  routeOf,
} from '@cellfed/federation';

import { copiedFromCell } from './migration-marks.ts';
import type { RebalancePlan } from '../rebalance-plan.ts';

/**
 * Whether a copy of an object leaves the migration something to do under `plan`: it carries migration marks,
 * or it is in its old cell and bound for another. An unmarked copy anywhere else (made in the new cell, or a
 * stray created straight in a cell) is left alone by the reconciler, so it is not queued.
 */
export function needsWork(
  plan: RebalancePlan,
  cell: string,
  ref: CellularObjectRef,
  metadata: Readonly<ObjectMeta>,
  namespaceLabels: (namespace: string) => Record<string, string> | undefined,
): boolean {
  if (isCellOwnObject(ref) || madeByItsCell(metadata)) return false;
  if (metadata.labels?.[REBALANCE_STATUS_LABEL] !== undefined) return true;
  if (copiedFromCell(metadata) !== undefined) return true;
  const { oldCell, newCell } = routeOf(plan.table, ref, namespaceLabels);
  return oldCell !== newCell && cell === oldCell;
}
