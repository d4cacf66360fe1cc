import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL, type CellState } from '@cellfed/hashing';

import { type CopiesView } from '@cellfed/controller-kit';
import { isCellOwnObject, routeOf } from '@cellfed/federation';

import { copiedFromCell } from '../migration/migration-marks.ts';
import type { RebalancePlan } from '../rebalance-plan.ts';

interface CellProgress {
  readonly id: string;
  readonly state: CellState;
  /** Objects the cell serves now. */
  objects: number;
  movingIn: number;
  movingOut: number;
}

/** Where the objects are, counted over the caches for one plan. */
export interface Progress {
  /** Distinct objects (each counted once, in the cell that serves it). */
  total: number;
  /** Objects whose cell changes with this plan: pending plus moved. */
  toMove: number;
  /** Of those, the ones already served by their new cell. */
  moved: number;
  /** The ones still served by their old cell. */
  pending: number;
  /** Pending objects whose writes are fenced now. */
  inFlight: number;
  /** New copies not committed yet (their old copy may already say `migrated`): the rebalance is not over. */
  uncommitted: number;
  cells: CellProgress[];
  /** A few pending objects as the cache shows them, to say what a stalled rebalance waits for. */
  pendingExamples: PendingExample[];
}

/** One pending object's old copy, as the cache shows it. */
interface PendingExample {
  readonly object: string;
  readonly cell: string;
  readonly newCell: string;
  readonly status?: string;
  readonly deleting?: true;
  readonly finalizers?: readonly string[];
}

const PENDING_EXAMPLES = 5;

/**
 * Counts every cached copy once, as the router sees it: an object is served by its old cell until the old
 * copy says `migrated`, then by its new cell. Leftover old copies and uncommitted new copies are not objects.
 */
export function countProgress(
  copies: CopiesView,
  plan: RebalancePlan,
  namespaceLabels: (namespace: string) => Record<string, string> | undefined,
): Progress {
  const cells = new Map<string, CellProgress>(
    plan.spec.cells.map((cell) => [
      cell.id,
      { id: cell.id, state: cell.state, objects: 0, movingIn: 0, movingOut: 0 },
    ]),
  );
  const progress: Progress = {
    total: 0,
    toMove: 0,
    moved: 0,
    pending: 0,
    inFlight: 0,
    uncommitted: 0,
    cells: [],
    pendingExamples: [],
  };
  copies.eachCopy((cell, ref, metadata) => {
    if (isCellOwnObject(ref)) return;
    const { oldCell, newCell } = routeOf(plan.table, ref, namespaceLabels);
    const status = metadata.labels?.[REBALANCE_STATUS_LABEL];
    if (copiedFromCell(metadata) !== undefined) progress.uncommitted++;
    if (oldCell === newCell) {
      if (cell !== oldCell) return;
      progress.total++;
      cells.get(cell)!.objects++;
    } else if (cell === oldCell) {
      if (status === MIGRATED) return;
      progress.total++;
      progress.toMove++;
      progress.pending++;
      if (status === MIGRATING) progress.inFlight++;
      if (progress.pendingExamples.length < PENDING_EXAMPLES)
        progress.pendingExamples.push({
          object: `${ref.resource.resource}/${ref.namespace}/${ref.name}`,
          cell,
          newCell,
          ...(status ? { status } : {}),
          ...(metadata.deletionTimestamp ? { deleting: true as const } : {}),
          ...(metadata.finalizers?.length ? { finalizers: metadata.finalizers } : {}),
        });
      cells.get(oldCell)!.objects++;
      cells.get(oldCell)!.movingOut++;
      cells.get(newCell)!.movingIn++;
    } else if (cell === newCell) {
      // A `migrated` copy here is the leftover of an earlier move out of this cell (a drain soon after a
      // join, inside --delete-after), not the object: it has not moved back yet.
      if (copiedFromCell(metadata) !== undefined || status === MIGRATED) return;
      progress.total++;
      progress.toMove++;
      progress.moved++;
      cells.get(newCell)!.objects++;
    }
  });
  progress.cells = [...cells.values()];
  return progress;
}

/** Objects moved per second over the last `windowMs`, from samples of the moved count. */
export class MoveRate {
  private samples: { at: number; moved: number }[] = [];
  private readonly windowMs: number;

  constructor(windowMs = 30_000) {
    this.windowMs = windowMs;
  }

  /** Adds a sample; a drop in the count (a new plan) starts the window afresh. */
  add(at: number, moved: number): void {
    const last = this.samples.at(-1);
    if (last && moved < last.moved) this.samples = [];
    this.samples.push({ at, moved });
    while (this.samples.length > 2 && this.samples[0]!.at < at - this.windowMs) this.samples.shift();
  }

  /** Objects per second, or undefined until the window spans a second. */
  perSecond(): number | undefined {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || last.at - first.at < 1000) return undefined;
    return ((last.moved - first.moved) * 1000) / (last.at - first.at);
  }
}
