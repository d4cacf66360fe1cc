import { FOLLOWER_LABEL, MIRROR_HASH_ANNOTATION } from '@cellfed/api';
import {
  ApiError,
  CONTROL_PLANE,
  errorMessage,
  readIfExists,
  type KubeClient,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import { CLAIMS, resourcePath, type KubeObject, type CellularObjectRef } from '@cellfed/federation';

import type { CellEnd, CellLookup } from '../cell-end.ts';
import type { NamespacedKey } from '../copies/copied-kind-controller.ts';
import { applyCopy, placedByCellSet, removeCopy, writeShownStatus } from '../copies/copy-writes.ts';
import { userMarks } from '../followers/follower-copy.ts';
import { contentHash } from '../mirror-marks.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import { isCellOwn } from '../mirror/shared-objects.ts';

type Client = Pick<KubeClient, 'request'>;

export interface PersistentVolumeClaim extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export interface ClaimReconcilerOptions {
  plans: PlanHolder;
  controlPlane: Client;
  /** The control plane's claim, from its cache. */
  claim: (namespace: string, name: string) => PersistentVolumeClaim | undefined;
  /** The cells whose pod templates name the claim (the follower reconciler's last passes). */
  cellsNaming: (ref: CellularObjectRef) => string[];
  /** An engaged cell. */
  cell: CellLookup;
}

/**
 * Puts a control-plane PersistentVolumeClaim where the pods that mount it are (docs/governance.md#persistentvolumeclaims):
 * one copy, in the first live cell whose pod templates name it, which provisions and binds the volume there;
 * its status (phase, capacity, conditions) shown on the control-plane claim. A claim is storage: once a cell
 * holds it, it stays there while the cell is live, even when no pod there names it any more, as a claim
 * outlives its pods on one apiserver. It is never copied into a second cell (that would be a second, empty
 * volume); pods in another cell that mount it wait, and the controller warns. The copy goes when the
 * control-plane claim is deleted. The control plane's own volume binder must not run: it would find no
 * volume and write `Pending` over the status.
 */
export class ClaimReconciler implements Reconciler<NamespacedKey> {
  private readonly options: ClaimReconcilerOptions;

  constructor(options: ClaimReconcilerOptions) {
    this.options = options;
  }

  async reconcile({ key, signal, log }: ReconcileRequest<NamespacedKey>): Promise<ReconcileResult> {
    const { namespace, name } = key;
    const plan = this.options.plans.current();
    if (!plan || placedByCellSet(plan, CLAIMS)) return {};
    const claim = this.options.claim(namespace, name);
    // The control plane's own (its system namespaces', cellfed's) stay its own.
    if (claim && isCellOwn(claim, CLAIMS)) return {};
    const wanted = claim && !claim.metadata.deletionTimestamp ? claim : undefined;
    const path = resourcePath(CLAIMS, namespace, name);
    const live = plan.liveCells;
    const copies = new Map<string, PersistentVolumeClaim>();
    /** Cells with a claim of that name of their own (a StatefulSet's): never the federation's to change. */
    const occupied = new Set<string>();
    for (const id of live) {
      const cell = this.options.cell(id);
      if (!cell) return { requeueAfterMs: 5000 }; // a live cell's copy is not known: decide nothing
      const existing = await readIfExists<PersistentVolumeClaim>(cell.client, path, { signal });
      if (!existing) continue;
      if (existing.metadata.labels?.[FOLLOWER_LABEL] !== CONTROL_PLANE) occupied.add(id);
      else if (!wanted) {
        if (await removeCopy(cell.client, CLAIMS, existing, signal))
          log.info({ namespace, claim: name, cell: id }, 'claim copy deleted with its control-plane claim');
      } else if (existing.metadata.deletionTimestamp) {
        // A copy of a claim deleted and made again, still held by its pods: its volume is the old one. The
        // new claim waits for it to go rather than take it over.
        log.info({ namespace, claim: name, cell: id }, 'claim waits for its deleted copy to go');
        return { requeueAfterMs: 5000 };
      } else copies.set(id, existing);
    }
    if (copies.size > 1)
      log.warn(
        { namespace, claim: name, cells: [...copies.keys()] },
        'a claim has copies in several cells (a Down cell came back): each is its own volume',
      );
    if (!wanted) return {};
    const naming = this.options
      .cellsNaming({ resource: CLAIMS, namespace, name })
      .filter((id) => live.includes(id) && !occupied.has(id))
      .sort();
    const home = [...copies.keys()].sort()[0] ?? naming[0];
    if (!home) return {};
    const waiting = naming.filter((id) => id !== home);
    if (waiting.length > 0)
      log.warn(
        { namespace, claim: name, cell: home, waiting },
        'a claim is named from several cells: it is in one, and pods in the others that mount it wait',
      );
    const copy = await this.place(this.options.cell(home)!, wanted, copies.get(home), signal, log);
    await this.showStatus(wanted, copy, log);
    return {};
  }

  /** Applies the copy's content unless the cell holds it; answers the copy as the cell has it. */
  private async place(
    cell: CellEnd,
    claim: PersistentVolumeClaim,
    existing: PersistentVolumeClaim | undefined,
    signal: AbortSignal,
    log: Logger,
  ): Promise<PersistentVolumeClaim | undefined> {
    const { name = '', namespace = '', labels, annotations } = claim.metadata;
    const content = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace, labels: userMarks(labels), annotations: userMarks(annotations) },
      spec: withoutBinding(claim.spec),
    };
    const hash = contentHash(content);
    if (existing?.metadata.annotations?.[MIRROR_HASH_ANNOTATION] === hash) return existing;
    const copy = {
      ...content,
      metadata: {
        ...content.metadata,
        labels: { ...content.metadata.labels, [FOLLOWER_LABEL]: CONTROL_PLANE },
        annotations: { ...content.metadata.annotations, [MIRROR_HASH_ANNOTATION]: hash },
      },
    };
    try {
      const applied = await applyCopy(cell.client, CLAIMS, copy, signal);
      log.info(
        { namespace, claim: name, cell: cell.id },
        existing ? 'claim copy updated' : 'claim placed in its pods’ cell',
      );
      return applied;
    } catch (error) {
      // Most of a bound claim's spec is immutable: a change the cell refuses stays the control plane's alone.
      if (!(error instanceof ApiError) || error.statusCode !== 422 || !existing) throw error;
      log.warn(
        { namespace, claim: name, cell: cell.id, err: errorMessage(error) },
        'the cell refuses the claim’s change',
      );
      return existing;
    }
  }

  /** Writes the copy's status onto the control-plane claim when it says more. */
  private async showStatus(
    claim: PersistentVolumeClaim,
    copy: PersistentVolumeClaim | undefined,
    log: Logger,
  ) {
    if (copy?.status && (await writeShownStatus(this.options.controlPlane, CLAIMS, claim, copy.status)))
      log.debug({ namespace: claim.metadata.namespace, claim: claim.metadata.name }, 'claim status shown');
  }
}

/** The spec without what binds it to a volume of the control plane (none is there to bind). */
function withoutBinding(spec: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!spec) return spec;
  const { volumeName: _volume, ...rest } = spec;
  return rest;
}
