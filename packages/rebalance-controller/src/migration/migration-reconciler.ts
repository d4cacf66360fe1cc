import { QUIESCED_ANNOTATION, MIGRATED_AT_ANNOTATION, PROMOTED_FROM_ANNOTATION } from '@cellfed/api';
import { type Clock, type ReconcileResult, type TokenBucket, type CopiesView } from '@cellfed/controller-kit';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import type { Logger } from 'pino';
import { type ObjectMeta, madeByItsCell, type CellularObjectRef, routeOf } from '@cellfed/federation';

import type { ObjectReconciler, ObjectRequest } from '../planned-objects.ts';
import type { CellEnd, CellLookup } from '../cell-end.ts';
import { RebalanceError, RebalanceErrorCode } from '../errors.ts';
import { copiedFromCell } from './migration-marks.ts';
import type { FenceWindow } from './fence-window.ts';
import type { Move, MoveOutcome, ObjectMover } from './object-mover.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import type { MigrationResult, RebalanceMetrics } from '../rebalance-metrics.ts';

export interface MigrationReconcilerOptions {
  plans: PlanHolder;
  copies: CopiesView;
  /** An engaged cell by id, or undefined. */
  cell: CellLookup;
  /** The control plane's labels of a namespace (its `cellfed.io/shard-by` changes an object's key). */
  namespaceLabels: (namespace: string) => Record<string, string> | undefined;
  mover: ObjectMover;
  metrics: RebalanceMetrics;
  clock: Clock;
  /** How long an old copy stays after its move (12 h by default) before it is deleted. */
  deleteAfterMs: number;
  /** Optional limit on how many moves start per second. */
  rate?: TokenBucket;
  /**
   * How many moves fence their objects at once, adapted to the fence times (fence-window.ts); none: as many
   * as there are workers.
   */
  fences?: FenceWindow;
  /**
   * How long a move this process just finished waits for the cache to show it before the object is looked
   * at again from a cache that still does not. Default 10 s.
   */
  cacheLagMs?: number;
}

/** A move this process finished, until the cache shows it. */
interface JustMoved {
  generation: number;
  until: number;
}

const OUTCOME_METRIC: Record<MoveOutcome['result'], MigrationResult> = {
  moved: 'moved',
  'already-moved': 'already_moved',
  'source-gone': 'source_gone',
  'source-deleting': 'source_deleting',
  'quota-wait': 'quota_wait',
};

/**
 * How soon a move its new cell's quota refused is tried again: the quota controller frees the fenced old
 * copy's share within the first wait; a refusal that lasts (a limit lowered below use) is tried ever less
 * often, up to the last.
 */
const QUOTA_WAITS_MS = { first: 250, last: 10_000 };
/** How soon an object promoted from a Down cell's backup is looked at again if its commit is not seen. */
const PROMOTION_COMMIT_WAIT_MS = 2000;

/**
 * Puts one object where the CellSet says it belongs, keyed by the object alone (`deployments.apps/ns/name`)
 * so its old and new copies are never worked on by two workers at once. Level-based: from the copies the
 * cells hold now it decides what is left to do, whatever happened before (a crash, a lost leader, a CellSet
 * that changed back), and does it:
 * - in its old cell and bound for another: move it (when the plan's gate is open);
 * - its old copy `migrated`: commit the new copy, delete the old one `deleteAfter` after its move;
 * - a fence left on an object that now stays where it is: take it down;
 * - a copy that was never committed and whose source is gone: delete it.
 */
export class MigrationReconciler implements ObjectReconciler {
  private readonly options: MigrationReconcilerOptions;
  /**
   * The watch events of a move's own writes arrive after the move: until then the cache still shows the
   * object unmoved, and acting on that would only read the cells again to find it moved.
   */
  private readonly justMoved = new Map<string, JustMoved>();
  /** How many times in a row each key's move waited for quota share (see QUOTA_WAITS_MS). */
  private readonly quotaWaits = new Map<string, number>();
  /** Old copies (`cell/uid`) quiesced or found at rest by this process: not read again until deleted. */
  private readonly quiesced = new Set<string>();

  constructor(options: MigrationReconcilerOptions) {
    this.options = options;
  }

  async reconcile({ plan, ref, key, signal, log }: ObjectRequest): Promise<ReconcileResult> {
    const decision = routeOf(plan.table, ref, this.options.namespaceLabels);
    const copies = this.options.copies.copiesOf(ref);
    const objectLog = log.child({
      cell: decision.oldCell,
      newCell: decision.newCell,
      object: key,
      generation: plan.generation,
    });
    const results: ReconcileResult[] = [];
    for (const [cell, metadata] of copies) {
      if (cell === decision.oldCell || cell === decision.newCell) continue;
      results.push(await this.tidyElsewhere(ref, cell, metadata, copies, signal, objectLog.child({ cell })));
    }
    const oldCopy = copies.get(decision.oldCell);
    // What the old cell's controllers made (a CronJob's Job) stays where it runs.
    if (oldCopy && madeByItsCell(oldCopy) && oldCopy.labels?.[REBALANCE_STATUS_LABEL] === undefined)
      return earliest(results);
    const status = oldCopy?.labels?.[REBALANCE_STATUS_LABEL];
    const cacheBehindInMs = this.cacheBehind(key, plan.generation, status, copies.get(decision.newCell));
    if (cacheBehindInMs > 0) return earliest([...results, { requeueAfterMs: cacheBehindInMs }]);
    if (decision.oldCell === decision.newCell) {
      // It stays. A copy here whose source handed over is the object: commit it.
      const source = copiedFromCell(oldCopy);
      if (source !== undefined && copies.get(source)?.labels?.[REBALANCE_STATUS_LABEL] === MIGRATED)
        await this.options.mover.commit(
          this.cellEnd(decision.oldCell),
          ref,
          signal,
          undefined,
          this.options.cell(source),
        );
      // A fence left from a move that was called off comes down.
      if (status === MIGRATING) {
        const here = this.cellEnd(decision.oldCell);
        await this.options.mover.unfence({ ref, from: here, to: here, signal, log: objectLog });
        this.options.metrics.migrations.inc({ result: 'called_off' });
        objectLog.info('move called off (the CellSet changed back); fence taken down');
      }
      return earliest(results);
    }
    const newCopy = copies.get(decision.newCell);
    if (status === MIGRATED) {
      if (copiedFromCell(newCopy) !== undefined)
        await this.options.mover.commit(
          this.cellEnd(decision.newCell),
          ref,
          signal,
          undefined,
          this.options.cell(decision.oldCell),
        );
      results.push(await this.deleteWhenDue(ref, decision.oldCell, oldCopy!, signal, objectLog));
      return earliest(results);
    }
    // Nothing in the old cell: it was created in the new one, or its copy there awaits its source's fate.
    if (!oldCopy && copiedFromCell(newCopy) === undefined) return earliest(results);
    if (!plan.movesAllowed) return earliest(results);
    // Promoted from a Down cell's backup, but not committed: the commit reads the backup in this cell, so
    // the object moves once it is done (the commit's change brings the key back).
    if (status !== MIGRATING && oldCopy?.annotations?.[PROMOTED_FROM_ANNOTATION] !== undefined) {
      objectLog.debug('promotion not committed yet; the move waits for it');
      return earliest([...results, { requeueAfterMs: PROMOTION_COMMIT_WAIT_MS }]);
    }
    const { rate, clock, fences } = this.options;
    // A new move needs room in the fence window (its key is queued again when there is, no worker waits);
    // one whose object is already fenced (resumed) goes on at once, and counts.
    const permit = status === MIGRATING ? fences?.acquireFenced() : fences?.tryAcquire(key);
    if (fences && !permit) return earliest(results);
    if (status !== MIGRATING && rate && !rate.tryTake(clock.now())) {
      permit?.release();
      return earliest([...results, { requeueAfterMs: rate.waitMs(clock.now()) }]);
    }
    let outcome: MoveOutcome | undefined;
    try {
      outcome = await this.move({
        ref,
        from: this.cellEnd(decision.oldCell),
        to: this.cellEnd(decision.newCell),
        signal,
        log: objectLog,
        planStillCurrent: () => this.options.plans.current()?.generation === plan.generation,
        ...(oldCopy ? { cached: oldCopy } : {}),
      });
    } finally {
      permit?.release(outcome?.result === 'moved' ? outcome.fenceMs : undefined);
    }
    if (outcome.result === 'moved' || outcome.result === 'already-moved') {
      const until = this.options.clock.now() + (this.options.cacheLagMs ?? 10_000);
      this.justMoved.set(key, { generation: plan.generation, until });
      results.push({ requeueAfterMs: this.options.deleteAfterMs });
    }
    if (outcome.result === 'source-deleting') results.push({ requeueAfterMs: 5000 });
    if (outcome.result === 'quota-wait') {
      const waits = (this.quotaWaits.get(key) ?? 0) + 1;
      this.quotaWaits.set(key, waits);
      // Once per wait, not per retry: why a move stays fenced is then in the log at its default level.
      if (waits === 1)
        objectLog.info({ refusal: outcome.refusal }, 'move waits for quota share in its new cell');
      results.push({
        requeueAfterMs: Math.min(QUOTA_WAITS_MS.first * 2 ** (waits - 1), QUOTA_WAITS_MS.last),
      });
    } else this.quotaWaits.delete(key);
    return earliest(results);
  }

  /**
   * How long to wait for the cache to show a move this process just made (0: go on). It shows it once the
   * old copy says `migrated` and the new one is committed; a newer plan, or the wait running out, ends it.
   */
  private cacheBehind(
    key: string,
    generation: number,
    oldStatus: string | undefined,
    newCopy: Readonly<ObjectMeta> | undefined,
  ): number {
    const moved = this.justMoved.get(key);
    if (!moved) return 0;
    const waitMs = moved.until - this.options.clock.now();
    const shown = oldStatus === MIGRATED && newCopy !== undefined && copiedFromCell(newCopy) === undefined;
    if (shown || waitMs <= 0 || moved.generation !== generation) {
      this.justMoved.delete(key);
      return 0;
    }
    return waitMs;
  }

  private async move(move: Move): Promise<MoveOutcome> {
    const { mover, metrics } = this.options;
    const { log } = move;
    try {
      const outcome = await mover.move(move);
      metrics.migrations.inc({ result: OUTCOME_METRIC[outcome.result] });
      if (outcome.result === 'moved') {
        metrics.fenceSeconds.observe(outcome.fenceMs / 1000);
        // One line per object is debug: the CellSet reconciler logs the rebalance's progress.
        log.debug({ fenceMs: outcome.fenceMs }, 'moved');
      } else if (outcome.result === 'source-gone') {
        log.info('deleted by a user during its move; it stays deleted');
      }
      return outcome;
    } catch (error) {
      const changed = error instanceof RebalanceError && error.code === RebalanceErrorCode.ChangedWhileFenced;
      metrics.migrations.inc({ result: changed ? 'conflict' : 'failed' });
      throw error;
    }
  }

  /** A copy in a cell that is neither the object's old nor its new one. */
  private async tidyElsewhere(
    ref: CellularObjectRef,
    cell: string,
    metadata: ObjectMeta,
    copies: ReadonlyMap<string, ObjectMeta>,
    signal: AbortSignal,
    log: Logger,
  ): Promise<ReconcileResult> {
    if (metadata.labels?.[REBALANCE_STATUS_LABEL] === MIGRATED)
      return this.deleteWhenDue(ref, cell, metadata, signal, log);
    const sourceCell = copiedFromCell(metadata);
    if (sourceCell === undefined) return {};
    if (copies.get(sourceCell)?.labels?.[REBALANCE_STATUS_LABEL] === MIGRATED) {
      // Its source handed over to it before the CellSet changed: it is the object now, keep it.
      await this.options.mover.commit(
        this.cellEnd(cell),
        ref,
        signal,
        undefined,
        this.options.cell(sourceCell),
      );
      log.warn({ source: sourceCell }, 'committed a copy whose move finished under an earlier CellSet');
      return {};
    }
    // A copy for a move the CellSet no longer wants: its source is still the object.
    const from = this.options.cell(sourceCell);
    if (from) {
      const { droppedCopy } = await this.options.mover.dropUncommittedCopy({
        ref,
        from,
        to: this.cellEnd(cell),
        signal,
      });
      if (droppedCopy) log.info('deleted a copy made for a move that was called off');
    }
    return {};
  }

  /**
   * Step 5: the old copy is quiesced at once (quiesce.ts) and deleted `deleteAfter` after it was labelled
   * `migrated`; until then, look again then.
   */
  private async deleteWhenDue(
    ref: CellularObjectRef,
    cell: string,
    metadata: ObjectMeta,
    signal: AbortSignal,
    log: Logger,
  ): Promise<ReconcileResult> {
    const { clock, deleteAfterMs, mover, metrics } = this.options;
    const end = this.cellEnd(cell);
    // Before it waits out deleteAfter, the old copy stops running in its cell (pods, CronJob runs).
    const copy = `${cell}/${metadata.uid ?? ''}`;
    if (metadata.annotations?.[QUIESCED_ANNOTATION] === undefined && !this.quiesced.has(copy)) {
      if (await mover.quiesce(end, ref, signal)) log.info('old copy quiesced: its cell runs it no more');
      this.quiesced.add(copy);
    }
    const migratedAt = Date.parse(metadata.annotations?.[MIGRATED_AT_ANNOTATION] ?? '');
    if (Number.isNaN(migratedAt)) {
      await mover.stampMigratedAt(end, ref, signal);
      return { requeueAfterMs: deleteAfterMs };
    }
    const dueInMs = migratedAt + deleteAfterMs - clock.now();
    if (dueInMs > 0) return { requeueAfterMs: dueInMs };
    this.quiesced.delete(copy);
    if (await mover.deleteCopy(end, ref, metadata.uid ?? '', signal)) {
      metrics.oldCopiesDeleted.inc();
      log.info({ deleteAfterMs }, 'old copy deleted');
    }
    return {};
  }

  private cellEnd(id: string): CellEnd {
    const cell = this.options.cell(id);
    if (!cell) {
      throw new RebalanceError(RebalanceErrorCode.CellNotEngaged, `cell ${id} is not engaged yet`);
    }
    return cell;
  }
}

/** The soonest of several "look again" times; none means done. */
function earliest(results: readonly ReconcileResult[]): ReconcileResult {
  const times = results.map((result) => result.requeueAfterMs).filter((ms): ms is number => ms !== undefined);
  return times.length > 0 ? { requeueAfterMs: Math.min(...times) } : {};
}
