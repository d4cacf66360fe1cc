import { FOLLOWER_LABEL, MIRROR_HASH_ANNOTATION } from '@cellfed/api';
import {
  CONTROL_PLANE,
  readIfExists,
  type CopiesView,
  type KubeClient,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@cellfed/controller-kit';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import type { Logger } from 'pino';
import { resourcePath } from '@cellfed/federation';

import type { CellEnd, CellLookup } from '../cell-end.ts';
import { AUTOSCALERS, autoscalerCopy, shownStatus, type HorizontalPodAutoscaler } from './autoscaler-copy.ts';
import type { NamespacedKey } from '../copies/copied-kind-controller.ts';
import { applyCopy, placedByCellSet, removeCopy, writeShownStatus } from '../copies/copy-writes.ts';
import type { OwnerKinds } from '../collector/owner-kinds.ts';
import type { PlanHolder, RebalancePlan } from '../rebalance-plan.ts';
import { isCellOwn, sameResource } from '../mirror/shared-objects.ts';

type Client = Pick<KubeClient, 'request'>;

export interface AutoscalerReconcilerOptions {
  plans: PlanHolder;
  controlPlane: Client;
  /** The control plane's autoscaler, from its cache. */
  autoscaler: (namespace: string, name: string) => HorizontalPodAutoscaler | undefined;
  /** Where the cellular objects' copies are. */
  copies: CopiesView;
  /** An engaged cell. */
  cell: CellLookup;
  /** Which resource a `scaleTargetRef` names. */
  kinds: Pick<OwnerKinds, 'resolve'>;
}

/**
 * Makes a control-plane HorizontalPodAutoscaler act on its target where the target lives
 * (docs/governance.md#horizontalpodautoscalers): a copy in the cell that holds the target (the copy that is
 * the object, not the fenced or left-behind one of a move), none in any other cell, and the copy's status,
 * as that cell's autoscaler computes it, shown on the control-plane object. The cell's autoscaler scales the
 * target there through its scale subresource. The control plane's own autoscaler must not run: it finds no
 * target and would write that over the status.
 */
export class AutoscalerReconciler implements Reconciler<NamespacedKey> {
  private readonly options: AutoscalerReconcilerOptions;

  constructor(options: AutoscalerReconcilerOptions) {
    this.options = options;
  }

  async reconcile({ key, signal, log }: ReconcileRequest<NamespacedKey>): Promise<ReconcileResult> {
    const { namespace, name } = key;
    const plan = this.options.plans.current();
    if (!plan || placedByCellSet(plan, AUTOSCALERS)) return {};
    const autoscaler = this.options.autoscaler(namespace, name);
    // The control plane's own (its system namespaces', cellfed's) act on the control plane's own workloads.
    if (autoscaler && isCellOwn(autoscaler, AUTOSCALERS)) return {};
    const live = autoscaler && !autoscaler.metadata.deletionTimestamp ? autoscaler : undefined;
    // Where the target is comes from the cells' caches: until they are listed, nothing is decided.
    if (live && !this.options.copies.synced(plan.liveCells)) return { requeueAfterMs: 1000 };
    const home = live ? await this.targetCell(plan, live, log) : undefined;
    const path = resourcePath(AUTOSCALERS, namespace, name);
    let copy: HorizontalPodAutoscaler | undefined;
    for (const id of plan.liveCells) {
      const cell = this.options.cell(id);
      if (!cell) continue;
      const existing = await readIfExists<HorizontalPodAutoscaler>(cell.client, path, { signal });
      const ours = existing?.metadata.labels?.[FOLLOWER_LABEL] === CONTROL_PLANE;
      if (existing && !ours) {
        // The cell's own autoscaler of that name: never the federation's to change.
        if (id === home)
          log.warn({ namespace, autoscaler: name, cell: id }, 'the cell has an autoscaler of that name');
        continue;
      }
      if (id === home && live) copy = await this.place(cell, live, existing, signal, log);
      // A copy goes with its autoscaler, or when its target is known to be in another cell: a target that
      // is nowhere (deleted, not made yet) leaves the copy where it was, its state with it, as one
      // apiserver keeps an autoscaler whose target went.
      else if (existing && (!live || home !== undefined)) await this.remove(cell, existing, signal, log);
    }
    if (live && home) await this.showStatus(live, copy, log);
    return {};
  }

  /**
   * The cell whose copy of the target is the object: not a move's fenced or committed old copy while
   * another copy is there (the old one until the new one is made). None when the target is not cellular (it
   * lives in the control plane, where no autoscaler runs) or not there.
   */
  private async targetCell(
    plan: RebalancePlan,
    autoscaler: HorizontalPodAutoscaler,
    log: Logger,
  ): Promise<string | undefined> {
    const target = autoscaler.spec?.scaleTargetRef;
    if (!target?.name || !target.kind) return undefined;
    const resource = await this.options.kinds.resolve(target.apiVersion ?? 'v1', target.kind);
    if (!resource || !plan.spec.cellularResources.some((cellular) => sameResource(cellular, resource))) {
      log.debug({ target }, 'autoscaler target is not cellular');
      return undefined;
    }
    const ref = { resource, namespace: autoscaler.metadata.namespace ?? '', name: target.name };
    const live = new Set(plan.liveCells);
    let home: string | undefined;
    for (const [id, metadata] of this.options.copies.copiesOf(ref)) {
      if (!live.has(id)) continue;
      const status = metadata.labels?.[REBALANCE_STATUS_LABEL];
      if (status !== MIGRATING && status !== MIGRATED) return id;
      home ??= id;
    }
    return home;
  }

  /** Applies the copy unless the cell holds this version; answers the copy as the cell has it. */
  private async place(
    cell: CellEnd,
    autoscaler: HorizontalPodAutoscaler,
    existing: HorizontalPodAutoscaler | undefined,
    signal: AbortSignal,
    log: Logger,
  ): Promise<HorizontalPodAutoscaler | undefined> {
    const copy = autoscalerCopy(autoscaler);
    const hash = copy.metadata.annotations?.[MIRROR_HASH_ANNOTATION];
    if (existing?.metadata.annotations?.[MIRROR_HASH_ANNOTATION] === hash) return existing;
    // A namespace not in the cell yet (the mirror makes it) fails this and the key is retried.
    const applied = await applyCopy(cell.client, AUTOSCALERS, copy, signal);
    const { namespace, name } = autoscaler.metadata;
    log.info({ namespace, autoscaler: name, cell: cell.id }, 'autoscaler placed in its target’s cell');
    return applied;
  }

  private async remove(
    cell: CellEnd,
    existing: HorizontalPodAutoscaler,
    signal: AbortSignal,
    log: Logger,
  ): Promise<void> {
    const { namespace, name } = existing.metadata;
    if (await removeCopy(cell.client, AUTOSCALERS, existing, signal))
      log.info({ namespace, autoscaler: name, cell: cell.id }, 'autoscaler copy removed from a cell');
  }

  /** Writes the copy's status onto the control-plane autoscaler, when it is current and says more. */
  private async showStatus(
    autoscaler: HorizontalPodAutoscaler,
    copy: HorizontalPodAutoscaler | undefined,
    log: Logger,
  ): Promise<void> {
    const status = shownStatus(autoscaler, copy);
    if (status && (await writeShownStatus(this.options.controlPlane, AUTOSCALERS, autoscaler, status)))
      log.debug(
        { namespace: autoscaler.metadata.namespace, autoscaler: autoscaler.metadata.name },
        'autoscaler status shown',
      );
  }
}
