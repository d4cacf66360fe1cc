import {
  isConflict,
  type CellPool,
  type Clock,
  type KubeClient,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
  type CopiesView,
} from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import {
  MERGE_PATCH,
  type KubeObject,
  keyCodec,
  type Key,
  routersBehind,
  type RouterLease,
} from '@cellfed/federation';

import {
  finishedCells,
  progressStatus,
  rebalanceConditions,
  setCondition,
  type CellSetStatus,
  type Gate,
  type Condition,
  type LastRebalance,
  type RebalancePhase,
  type StoredCell,
} from './cellset-status.ts';
import type { MirrorState } from '../mirror/mirror-state.ts';
import { unpromotedBackupsGate } from './unpromoted-backups.ts';
import { countProgress, MoveRate, type Progress } from './progress.ts';
import type { PlanHolder, RebalancePlan } from '../rebalance-plan.ts';
import type { RebalanceMetrics } from '../rebalance-metrics.ts';
import { CELLSETS, StatusWriter } from './status-writer.ts';

export interface CellSetReconcilerOptions {
  pool: Pick<CellPool, 'cellSet' | 'cellSetObject' | 'get' | 'recordOnCellSet' | 'cellSetName'>;
  controlPlane: Pick<KubeClient, 'request'>;
  plans: PlanHolder;
  copies: CopiesView;
  mirror: MirrorState;
  /** The router Leases of this CellSet, from the cache. */
  routerLeases: () => readonly RouterLease[];
  namespaceLabels: (namespace: string) => Record<string, string> | undefined;
  /** Puts every object back in the migration queue (low lane): the gate has just opened. */
  enqueueAllObjects: () => void;
  metrics: RebalanceMetrics;
  clock: Clock;
  /**
   * How often a status whose counts alone changed is written (phase and condition changes are written at
   * once). Default 2 s.
   */
  statusIntervalMs?: number;
  /** How often progress is counted while a rebalance runs, so its end is seen promptly. Default 250 ms. */
  progressIntervalMs?: number;
}

/**
 * How long a rebalance may move nothing, with objects pending, before it is nudged. A live move takes well
 * under a second; one in flight this long was left by a leader that died mid-move and its key lost.
 */
const STALL_MS = 30_000;
/** How often a rebalance that waits only for a Down cell's promotions asks the cells again. */
const PROMOTIONS_RECHECK_MS = 2000;

/**
 * The cell lifecycle, keyed by the CellSet's name: validates the CellSet (an invalid one is refused with a
 * condition and the last good one stays), opens a generation's gate once every cell is engaged and listed,
 * every joining cell holds the shared objects and every live router routes with the generation; reports
 * progress in `status`; and when nothing is left to move, makes Joining cells Normal and lets Draining cells
 * go (their kubeconfig Secrets are left for the operator).
 */
/** The CellSet reconciler's key: the CellSet's name (the federation has one). */
export const CELLSET_KEYS = keyCodec(['name']);
export type CellSetKey = Key<'name'>;

export class CellSetReconciler implements Reconciler<CellSetKey> {
  private readonly options: CellSetReconcilerOptions;
  private readonly rate = new MoveRate();
  private readonly status: StatusWriter;
  private lastInvalid = '';
  private lastBlocked = '';
  private startedAt: { generation: number; at: number } | undefined;
  private lastRebalance: LastRebalance | undefined;
  /** The last time the moved count rose (or the plan changed), and the last nudge of a stalled rebalance. */
  private lastMove: { generation: number; moved: number; at: number; nudgedAt: number } | undefined;

  constructor(options: CellSetReconcilerOptions) {
    this.options = options;
    this.status = new StatusWriter({
      controlPlane: options.controlPlane,
      cellSetName: options.pool.cellSetName,
      clock: options.clock,
      ...(options.statusIntervalMs === undefined ? {} : { intervalMs: options.statusIntervalMs }),
    });
  }

  async reconcile({ signal, log }: ReconcileRequest<CellSetKey>): Promise<ReconcileResult> {
    const { pool, plans, clock } = this.options;
    const object = pool.cellSetObject();
    if (!object) return {};
    const generation = object.metadata.generation ?? 0;
    const existing = ((object as { status?: CellSetStatus }).status?.conditions ?? []) as Condition[];
    const cellSet = pool.cellSet();
    if (!cellSet.current) return this.refuseInvalid(object, cellSet.problem, existing, signal, log);
    this.lastInvalid = '';
    if (plans.load(cellSet.current.spec, generation)) {
      log.info(
        { generation, cells: cellSet.current.spec.cells.map((cell) => `${cell.id}:${cell.state}`) },
        'CellSet generation loaded',
      );
    }
    const plan = plans.current()!;
    let conditions = setCondition(
      existing,
      { type: 'Valid', status: 'True', reason: 'Valid', message: '', observedGeneration: generation },
      clock.now(),
    );
    const gate = plan.movesAllowed ? undefined : this.closedGate(plan);
    conditions = this.routerCondition(conditions, plan, gate);
    const opened = !gate && plans.allowMoves(generation);
    const current = plans.current()!;
    const progress = countProgress(this.options.copies, current, this.options.namespaceLabels);
    if (opened) await this.started(current, progress, log);
    const now = clock.now();
    this.rate.add(now, progress.moved);
    this.updateGauges(progress);
    const rebalancing = current.table.rebalancing;
    let finishGate: Gate | undefined;
    if (
      rebalancing &&
      current.movesAllowed &&
      progress.pending === 0 &&
      progress.uncommitted === 0 &&
      this.allListed(current)
    ) {
      finishGate = await unpromotedBackupsGate(current, (id) => pool.get(id)?.client, signal);
      if (!finishGate) return this.finish(object, current, progress.moved, signal, log);
    }
    const blocked = gate ?? finishGate;
    const phase: RebalancePhase = !rebalancing ? 'Stable' : blocked ? 'Blocked' : 'Rebalancing';
    conditions = rebalanceConditions(conditions, { generation, rebalancing, gate: blocked, progress }, now);
    await this.reportBlocked(blocked, log);
    if (rebalancing && !blocked) this.nudgeIfStalled(current, progress, now, log);
    const status = progressStatus(progress, rebalancing ? this.rate.perSecond() : undefined);
    const written = await this.status.write(
      { observedGeneration: generation, phase, ...status, ...this.lastRebalanceOf(object), conditions },
      signal,
    );
    if (written === 'written' && rebalancing && !blocked) {
      const { ratePerSecond, etaSeconds } = status;
      log.info({ generation, ...status.objects, ratePerSecond, etaSeconds }, 'rebalance progress');
    }
    // Promotions are asked after in the cells: not every progress tick.
    if (finishGate) return { requeueAfterMs: PROMOTIONS_RECHECK_MS };
    if (rebalancing) return { requeueAfterMs: this.options.progressIntervalMs ?? 250 };
    return typeof written === 'number' ? { requeueAfterMs: written } : {};
  }

  /**
   * An invalid CellSet: Valid=False with the problem (a Warning event once per problem); the last good
   * generation stays in force and its progress is shown as it was.
   */
  private async refuseInvalid(
    object: KubeObject,
    problem: string,
    existing: Condition[],
    signal: AbortSignal,
    log: Logger,
  ): Promise<ReconcileResult> {
    const generation = object.metadata.generation ?? 0;
    if (problem !== this.lastInvalid) {
      this.lastInvalid = problem;
      log.error({ generation, problem }, 'invalid CellSet refused; the last good one stays');
      await this.options.pool.recordOnCellSet('Warning', 'InvalidCellSet', `refused: ${problem}`);
    }
    const conditions = setCondition(
      existing,
      { type: 'Valid', status: 'False', reason: 'Invalid', message: problem, observedGeneration: generation },
      this.options.clock.now(),
    );
    await this.status.write({ ...this.previousProgress(object), phase: 'Invalid', conditions }, signal);
    return {};
  }

  /**
   * A rebalance whose moved count has not risen for {@link STALL_MS} while objects are pending (fenced or
   * not): every pending object is queued again (a key dropped anywhere is picked up; a key already queued or
   * in a worker's hands collapses), and what the cache shows of a few of them is logged, so the operator
   * sees what it waits for (a copy being deleted, say).
   */
  private nudgeIfStalled(plan: RebalancePlan, progress: Progress, now: number, log: Logger): void {
    const last = this.lastMove;
    if (!last || last.generation !== plan.generation || progress.moved > last.moved) {
      this.lastMove = { generation: plan.generation, moved: progress.moved, at: now, nudgedAt: now };
      return;
    }
    if (progress.pending === 0) return;
    if (now - last.at < STALL_MS || now - last.nudgedAt < STALL_MS) return;
    last.nudgedAt = now;
    log.warn(
      {
        generation: plan.generation,
        pending: progress.pending,
        inFlight: progress.inFlight,
        stalledSeconds: Math.round((now - last.at) / 1000),
        examples: progress.pendingExamples,
      },
      'rebalance stalled; queueing every pending object again',
    );
    this.options.enqueueAllObjects();
  }

  /** Why objects may not move yet for this plan, or undefined when they may. */
  private closedGate(plan: RebalancePlan): Gate | undefined {
    const live = plan.liveCells;
    const notReady = live.filter((id) => !this.options.pool.get(id) || !this.options.copies.synced([id]));
    if (notReady.length > 0)
      return { reason: 'CellsNotReady', message: `cells not engaged and listed yet: ${notReady.join(', ')}` };
    const unmirrored = live.filter((id) => !this.options.mirror.isMirrored(id));
    if (unmirrored.length > 0)
      return {
        reason: 'MirrorPending',
        message: `shared objects (namespaces, CRDs, sharedResources) not mirrored yet into: ${unmirrored
          .map((id) => {
            const problem = this.options.mirror.problem(id);
            return problem ? `${id} (${problem})` : id;
          })
          .join(', ')}`,
      };
    const behind = routersBehind(this.options.routerLeases(), plan.generation, this.options.clock.now());
    if (behind.length > 0)
      return {
        reason: 'RoutersBehind',
        message: `routers still on an older CellSet generation: ${behind
          .map((router) => `${router.identity} (${router.generation})`)
          .join(', ')}`,
      };
    return undefined;
  }

  private routerCondition(conditions: Condition[], plan: RebalancePlan, gate: Gate | undefined): Condition[] {
    const behind = gate?.reason === 'RoutersBehind';
    const known = !gate || behind;
    return setCondition(
      conditions,
      {
        type: 'RoutersAcknowledged',
        status: !known ? 'Unknown' : behind ? 'False' : 'True',
        reason: !known ? 'NotChecked' : behind ? 'RoutersBehind' : 'AllRoutersLoaded',
        message: behind
          ? gate.message
          : known
            ? `every live router routes with generation ${plan.generation}`
            : 'checked once the cells are ready',
        observedGeneration: plan.generation,
      },
      this.options.clock.now(),
    );
  }

  private async started(plan: RebalancePlan, progress: Progress, log: Logger): Promise<void> {
    this.options.enqueueAllObjects();
    if (!plan.table.rebalancing) return;
    this.startedAt = { generation: plan.generation, at: this.options.clock.now() };
    const changes = plan.spec.cells
      .filter((cell) => cell.state === 'Joining' || cell.state === 'Draining' || cell.previousWeight)
      .map((cell) =>
        cell.previousWeight
          ? `${cell.id} weight ${cell.previousWeight} → ${cell.weight}`
          : `${cell.id} ${cell.state.toLowerCase()}`,
      )
      .join(', ');
    log.info({ generation: plan.generation, toMove: progress.pending }, 'rebalance started');
    await this.options.pool.recordOnCellSet(
      'Normal',
      'RebalanceStarted',
      `moving ${progress.pending} of ${progress.total} objects (${changes})`,
    );
  }

  /** Nothing left to move: Joining → Normal, Draining cells leave the CellSet. */
  private async finish(
    object: KubeObject,
    plan: RebalancePlan,
    moved: number,
    signal: AbortSignal,
    log: Logger,
  ): Promise<ReconcileResult> {
    const { pool, clock } = this.options;
    // The cells and the resourceVersion come from one snapshot, so a PATCH that lands writes what was read.
    let { cells, removed } = finishedCells(cellsOf(object));
    const seconds =
      this.startedAt?.generation === plan.generation ? (clock.now() - this.startedAt.at) / 1000 : undefined;
    if (!(await this.patchCells(object.metadata.resourceVersion, cells, signal))) {
      // The cache is behind the CellSet, usually by this controller's own status write. Waiting for the watch
      // would tie the finish to its health: read the CellSet and, if its spec is still this generation's, try
      // once more at its resourceVersion.
      const fresh = await this.options.controlPlane.request<KubeObject>(
        'GET',
        `${CELLSETS}/${pool.cellSetName}`,
        { signal },
      );
      if (fresh.metadata.generation !== plan.generation) {
        log.debug({ generation: fresh.metadata.generation }, 'CellSet changed before it could be finished');
        return { requeue: true };
      }
      ({ cells, removed } = finishedCells(cellsOf(fresh)));
      if (!(await this.patchCells(fresh.metadata.resourceVersion, cells, signal))) {
        log.debug('CellSet changed before it could be finished; looking again');
        return { requeue: true };
      }
    }
    // Written with the next status, which the new generation's reconcile writes.
    this.lastRebalance = {
      generation: plan.generation,
      moved,
      ...(seconds === undefined ? {} : { seconds: Math.round(seconds * 10) / 10 }),
      finishedAt: new Date(clock.now()).toISOString(),
    };
    log.info({ generation: plan.generation, moved, seconds }, 'rebalance finished');
    await pool.recordOnCellSet(
      'Normal',
      'RebalanceFinished',
      `${moved} objects in their new cells${seconds === undefined ? '' : ` after ${seconds.toFixed(1)} s`}; ` +
        `${cells.map((cell) => `${cell.id} ${cell.state}`).join(', ')}`,
    );
    for (const cell of removed) {
      const ref = cell.kubeconfigSecretRef as { name?: string; namespace?: string } | undefined;
      await pool.recordOnCellSet(
        'Normal',
        'CellRemoved',
        `cell ${cell.id} drained and removed from the CellSet; its kubeconfig Secret ` +
          (ref?.namespace
            ? `${ref.namespace}/${ref.name ?? '?'} is`
            : `${ref?.name ?? '?'} in each component's credentials namespace is`) +
          ' left for the operator to delete (revoke the identities it holds in the cell too)',
      );
    }
    return { requeue: true };
  }

  /** Writes the cells of a finished rebalance at `resourceVersion`; false when the CellSet has moved on. */
  private async patchCells(
    resourceVersion: string | undefined,
    cells: StoredCell[],
    signal: AbortSignal,
  ): Promise<boolean> {
    try {
      await this.options.controlPlane.request('PATCH', `${CELLSETS}/${this.options.pool.cellSetName}`, {
        body: { metadata: { resourceVersion }, spec: { cells } },
        contentType: MERGE_PATCH,
        signal,
      });
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }

  private allListed(plan: RebalancePlan): boolean {
    return this.options.copies.synced(plan.liveCells);
  }

  private updateGauges(progress: { pending: number; inFlight: number; moved: number }): void {
    const { metrics } = this.options;
    metrics.pending.set(progress.pending);
    metrics.inFlight.set(progress.inFlight);
    metrics.moved.set(progress.moved);
  }

  private async reportBlocked(gate: Gate | undefined, log: Logger): Promise<void> {
    const text = gate ? `${gate.reason}: ${gate.message}` : '';
    if (text === this.lastBlocked) return;
    this.lastBlocked = text;
    if (!gate) return;
    log.info({ reason: gate.reason, problem: gate.message }, 'moves wait');
    await this.options.pool.recordOnCellSet('Normal', 'RebalanceWaiting', text);
  }

  private lastRebalanceOf(object: unknown): Pick<CellSetStatus, 'lastRebalance'> {
    const last = this.lastRebalance ?? (object as { status?: CellSetStatus }).status?.lastRebalance;
    return last ? { lastRebalance: last } : {};
  }

  private previousProgress(object: unknown): Partial<CellSetStatus> {
    const { observedGeneration, objects, cells } = (object as { status?: CellSetStatus }).status ?? {};
    return {
      ...this.lastRebalanceOf(object),
      ...(observedGeneration === undefined ? {} : { observedGeneration }),
      ...(objects ? { objects } : {}),
      ...(cells ? { cells } : {}),
    };
  }
}

function cellsOf(object: KubeObject | undefined): StoredCell[] {
  return (object?.spec as { cells?: StoredCell[] } | undefined)?.cells ?? [];
}
