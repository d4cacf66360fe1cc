// Over 400 lines on purpose: Kubernetes' collector rules (owners gone, orphan and foreground deletes) are
// applied to one object at a time against owners in cells and in the control plane; the rules read best
// side by side.
import { HELD_OWNERS_ANNOTATION, FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '@cellfed/api';
import {
  isNotFound,
  ApiError,
  type CopiesView,
  type KubeClient,
  type ReconcileResult,
} from '@cellfed/controller-kit';
import { MIGRATING, REBALANCE_STATUS_LABEL, needsOldCopy, resolveTarget } from '@cellfed/hashing';
import {
  MERGE_PATCH,
  METADATA,
  resourcePath,
  type ObjectMeta,
  HeldOwnersError,
  formatHeldOwners,
  heldOwners,
  heldOwnersOrNone,
  isKnownAs,
  ownerReferencesOf,
  orphanedOwnerEventsPath,
  parseObjectKey,
  type CellularObjectRef,
  type OwnerReference,
  objectPath,
} from '@cellfed/federation';

import type { ObjectReconciler, ObjectRequest } from '../planned-objects.ts';
import type { CellEnd, CellLookup } from '../cell-end.ts';
import { groupOf, ownerName } from './dependents-index.ts';
import type { OwnerKinds } from './owner-kinds.ts';
import type { RebalancePlan } from '../rebalance-plan.ts';
import type { RebalanceMetrics } from '../rebalance-metrics.ts';

export interface GarbageCollectorReconcilerOptions {
  copies: CopiesView;
  cell: CellLookup;
  /** The router control plane: owners that are not cellular live there. */
  controlPlane: Pick<KubeClient, 'request'>;
  kinds: OwnerKinds;
  namespaceLabels: (namespace: string) => Record<string, string> | undefined;
  /** The keys of the objects holding references to an owner named by `ownerName` (dependents-index.ts). */
  dependents: (owner: string) => readonly string[];
  metrics: RebalanceMetrics;
  /**
   * How often an object whose owners all exist is looked at again. A cellular owner's change queues its
   * dependents at once; an owner in the control plane is not watched, so its deletion is seen this late.
   * Default 60 s.
   */
  resyncMs?: number;
}

/**
 * Whether an owner exists as the reference names it (same uid), is gone, was deleted from the control plane
 * with orphan propagation through the router (its reference goes, never its dependents: see
 * controller-kit's orphaned-owners.ts), cannot be told yet, or may not be read by this controller (its RBAC
 * in the control plane): then its dependents are never collected.
 */
type OwnerState = 'present' | 'absent' | 'orphaned' | 'unknown' | 'forbidden';

/** The copy of an object clients see, or why there is none to act on. */
type LiveCopy =
  | { readonly kind: 'live'; readonly cell: string; readonly metadata: Readonly<ObjectMeta> }
  | { readonly kind: 'none' }
  /** Moving, failed over, or not listed everywhere: look again later. */
  | { readonly kind: 'wait' };

interface HeldDependent {
  readonly ref: CellularObjectRef;
  readonly cell: string;
  readonly metadata: Readonly<ObjectMeta>;
  /** Its held references without the owner's. */
  readonly kept: readonly OwnerReference[];
}

const WAIT_MS = 5000;
/** How soon a foreground delete looks again at the held dependents it is deleting. */
const FOREGROUND_POLL_MS = 1000;

/**
 * The garbage collector across cells, for owner references held out of the cells' own collectors (see
 * @cellfed/controller-kit's held-owners.ts), keyed by the dependent (`configmaps/ns/name`). Kubernetes'
 * rule, applied to the copy clients see: when every owner is gone (not found, or found under another uid)
 * the object is deleted; when some are, their references are removed. Owners are looked for where they
 * live: a cellular owner in the cell the routing rule names for it (known by the uid clients saw, also
 * after a move), any other in the control plane. Nothing is decided while an owner or the object moves,
 * is failed over, or while a cell is not listed: an owner not seen yet is not an owner gone.
 *
 * An owner deleted with orphan propagation through the router waits on {@link ORPHAN_FINALIZER}: its held
 * dependents lose their reference to it (as the cell's collector does for native ones), then the
 * finalizer comes off and the owner goes. With foreground propagation it waits on
 * {@link FOREGROUND_FINALIZER} until its held dependents are gone.
 */
export class GarbageCollectorReconciler implements ObjectReconciler {
  private readonly options: GarbageCollectorReconcilerOptions;
  private readonly resyncMs: number;

  constructor(options: GarbageCollectorReconcilerOptions) {
    this.options = options;
    this.resyncMs = options.resyncMs ?? 60_000;
  }

  async reconcile({ plan, ref, key, signal, log }: ObjectRequest): Promise<ReconcileResult> {
    const live = this.liveCopy(plan, ref);
    if (live.kind === 'wait') return { requeueAfterMs: WAIT_MS };
    if (live.kind === 'none') return {};
    const { cell, metadata } = live;
    const objectLog = log.child({ cell, object: key });
    if (metadata.deletionTimestamp) {
      if (metadata.finalizers?.includes(ORPHAN_FINALIZER))
        return this.orphanDependents(plan, ref, cell, metadata, signal, objectLog);
      if (metadata.finalizers?.includes(FOREGROUND_FINALIZER))
        return this.deleteDependentsFirst(plan, ref, cell, metadata, signal, objectLog);
      return {};
    }
    let held: OwnerReference[];
    try {
      held = heldOwners(metadata.annotations);
    } catch (error) {
      if (!(error instanceof HeldOwnersError)) throw error;
      objectLog.warn({ err: error.message }, 'owner references held in the cell do not parse; left alone');
      return {};
    }
    if (held.length === 0) return {};
    const states = await Promise.all(
      held.map((owner) => this.ownerState(plan, owner, ref.namespace, signal)),
    );
    if (states.includes('forbidden')) {
      objectLog.warn(
        {
          owners: held
            .filter((_, index) => states[index] === 'forbidden')
            .map((owner) => `${owner.apiVersion}/${owner.kind}`),
        },
        'may not read an owner in the control plane, or its Events (grant get on it, list on events, to collect this object); left alone',
      );
      return { requeueAfterMs: this.resyncMs };
    }
    if (states.includes('unknown')) return { requeueAfterMs: WAIT_MS };
    const gone = held.filter((_, index) => states[index] === 'absent' || states[index] === 'orphaned');
    if (gone.length === 0) return { requeueAfterMs: this.resyncMs };
    const goneOwners = gone.map((owner) => `${owner.kind}/${owner.name} (${owner.uid})`);
    // As on one apiserver, where an orphaning owner's reference went before it did: what is left decides.
    const collectable = states.includes('absent');
    if (collectable && gone.length === held.length && ownerReferencesOf(metadata).length === 0) {
      await this.collect(cell, ref, metadata, 'Background', signal);
      this.options.metrics.collected.inc({ action: 'deleted' });
      objectLog.info({ owners: goneOwners }, 'deleted: every owner is gone');
      return {};
    }
    await this.keepHeld(
      cell,
      ref,
      metadata,
      held.filter((owner) => !gone.includes(owner)),
      signal,
    );
    this.options.metrics.collected.inc({ action: 'references_removed' });
    objectLog.info({ owners: goneOwners }, 'references to owners that are gone removed');
    return { requeueAfterMs: this.resyncMs };
  }

  /**
   * Foreground: deletes the held dependents that have no other owner and removes the reference from those
   * that have (as Kubernetes' collector does), then, once none is left, the owner's foreground finalizer.
   */
  private async deleteDependentsFirst(
    plan: RebalancePlan,
    owner: CellularObjectRef,
    cell: string,
    metadata: Readonly<ObjectMeta>,
    signal: AbortSignal,
    log: ObjectRequest['log'],
  ): Promise<ReconcileResult> {
    const dependents = this.heldDependents(plan, owner, metadata);
    if (dependents === 'wait') return { requeueAfterMs: WAIT_MS };
    let left = 0;
    let deleted = 0;
    for (const dependent of dependents) {
      if (dependent.metadata.deletionTimestamp) {
        left += 1;
        continue;
      }
      if (dependent.kept.length > 0 || ownerReferencesOf(dependent.metadata).length > 0) {
        await this.keepHeld(dependent.cell, dependent.ref, dependent.metadata, dependent.kept, signal);
        continue;
      }
      left += 1;
      await this.collect(dependent.cell, dependent.ref, dependent.metadata, 'Foreground', signal);
      deleted += 1;
    }
    if (deleted > 0) this.options.metrics.collected.inc({ action: 'deleted' }, deleted);
    // Until the caches show them gone (a dependent's deletion does not queue its owner).
    if (left > 0) {
      log.info({ left, deleted }, 'foreground delete: waiting for held dependents to go');
      return { requeueAfterMs: FOREGROUND_POLL_MS };
    }
    await this.release(cell, owner, metadata, FOREGROUND_FINALIZER, signal);
    log.info('held dependents gone; owner released');
    return {};
  }

  /**
   * The live held dependents that name `owner`, each with the held references it keeps without it; 'wait'
   * while one of them cannot be told (moving, a cell not listed).
   */
  private heldDependents(
    plan: RebalancePlan,
    owner: CellularObjectRef,
    metadata: Readonly<ObjectMeta>,
  ): HeldDependent[] | 'wait' {
    const names = namesOwner(owner, metadata);
    const found: HeldDependent[] = [];
    for (const key of this.options.dependents(ownerName(owner.resource.group, owner.namespace, owner.name))) {
      const ref = parseObjectKey(key, plan.resources);
      const dependent = ref && this.liveCopy(plan, ref);
      if (!ref || !dependent || dependent.kind === 'none') continue;
      if (dependent.kind === 'wait') return 'wait';
      const held = heldOwnersOrNone(dependent.metadata.annotations);
      const kept = held.filter((reference) => !names(reference));
      if (kept.length < held.length)
        found.push({ ref, cell: dependent.cell, metadata: dependent.metadata, kept });
    }
    return found;
  }

  /** Deletes the object if it is still the one read (its uid); gone already is as good. */
  private async collect(
    cell: string,
    ref: CellularObjectRef,
    metadata: Readonly<ObjectMeta>,
    propagationPolicy: 'Background' | 'Foreground',
    signal: AbortSignal,
  ): Promise<void> {
    await this.cellClient(cell)
      .request('DELETE', objectPath(ref), {
        body: { preconditions: { uid: metadata.uid }, propagationPolicy },
        signal,
      })
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
  }

  /** Sets an object's held references to `kept`, at the version read (a concurrent change conflicts). */
  private async keepHeld(
    cell: string,
    ref: CellularObjectRef,
    metadata: Readonly<ObjectMeta>,
    kept: readonly OwnerReference[],
    signal: AbortSignal,
  ): Promise<void> {
    await this.cellClient(cell).request('PATCH', objectPath(ref), {
      body: {
        metadata: {
          resourceVersion: metadata.resourceVersion,
          annotations: { [HELD_OWNERS_ANNOTATION]: kept.length > 0 ? formatHeldOwners(kept) : null },
        },
      },
      contentType: MERGE_PATCH,
      signal,
    });
  }

  /** Removes `finalizer` from the owner: the list is replaced whole, at the version read. */
  private async release(
    cell: string,
    owner: CellularObjectRef,
    metadata: Readonly<ObjectMeta>,
    finalizer: string,
    signal: AbortSignal,
  ): Promise<void> {
    await this.cellClient(cell).request('PATCH', objectPath(owner), {
      body: {
        metadata: {
          resourceVersion: metadata.resourceVersion,
          finalizers: (metadata.finalizers ?? []).filter((candidate) => candidate !== finalizer),
        },
      },
      contentType: MERGE_PATCH,
      signal,
    });
  }

  /** Removes the references to `owner` from its held dependents, then the owner's orphan finalizer. */
  private async orphanDependents(
    plan: RebalancePlan,
    owner: CellularObjectRef,
    cell: string,
    metadata: Readonly<ObjectMeta>,
    signal: AbortSignal,
    log: ObjectRequest['log'],
  ): Promise<ReconcileResult> {
    const dependents = this.heldDependents(plan, owner, metadata);
    if (dependents === 'wait') return { requeueAfterMs: WAIT_MS };
    for (const dependent of dependents)
      await this.keepHeld(dependent.cell, dependent.ref, dependent.metadata, dependent.kept, signal);
    const orphaned = dependents.length;
    // A concurrent change of the finalizers conflicts and retries.
    await this.release(cell, owner, metadata, ORPHAN_FINALIZER, signal);
    this.options.metrics.collected.inc({ action: 'orphaned' }, orphaned);
    log.info({ orphaned }, 'held dependents orphaned; owner released');
    return {};
  }

  private async ownerState(
    plan: RebalancePlan,
    owner: OwnerReference,
    namespace: string,
    signal: AbortSignal,
  ): Promise<OwnerState> {
    const kind = await this.options.kinds.resolve(owner.apiVersion, owner.kind);
    // A kind nobody serves cannot be told gone from not installed yet; Kubernetes' collector waits too.
    if (!kind) return 'unknown';
    const ownerNamespace = kind.namespaced ? namespace : '';
    const cellular = plan.resources.get(kind.group ? `${kind.resource}.${kind.group}` : kind.resource);
    if (cellular && kind.namespaced) {
      const ref = { resource: cellular, namespace, name: owner.name };
      const live = this.liveCopy(plan, ref);
      if (live.kind === 'wait') return 'unknown';
      if (live.kind === 'live' && isKnownAs(live.metadata, owner.uid)) return 'present';
      return this.confirmedAbsent(plan, ref, owner.uid, signal);
    }
    try {
      const found = await this.options.controlPlane.request<{ metadata?: ObjectMeta }>(
        'GET',
        resourcePath(kind, ownerNamespace, owner.name),
        { accept: METADATA, signal },
      );
      if (found.metadata && isKnownAs(found.metadata, owner.uid)) return 'present';
    } catch (error) {
      if (isForbidden(error)) return 'forbidden';
      if (!isNotFound(error)) throw error;
    }
    return this.goneFromControlPlane(ownerNamespace, owner.uid, signal);
  }

  /** A control-plane owner that is gone: 'orphaned' when the router recorded an orphaning delete of it. */
  private async goneFromControlPlane(
    namespace: string,
    uid: string,
    signal: AbortSignal,
  ): Promise<OwnerState> {
    try {
      const events = await this.options.controlPlane.request<{ items?: unknown[] }>(
        'GET',
        orphanedOwnerEventsPath(namespace, uid),
        { signal },
      );
      return (events.items?.length ?? 0) > 0 ? 'orphaned' : 'absent';
    } catch (error) {
      if (isForbidden(error)) return 'forbidden';
      throw error;
    }
  }

  /**
   * Whether a cellular owner the caches do not show (or show under another uid) is really gone: read in
   * every live cell, as Kubernetes' collector reads the apiserver before it deletes. An owner created a
   * moment ago may not have reached the caches yet, while its dependent has: taken for gone, its dependent
   * would be deleted.
   */
  private async confirmedAbsent(
    plan: RebalancePlan,
    ref: CellularObjectRef,
    uid: string,
    signal: AbortSignal,
  ): Promise<OwnerState> {
    for (const id of plan.liveCells) {
      const cell = this.options.cell(id);
      if (!cell) return 'unknown';
      try {
        const found = await cell.client.request<{ metadata?: ObjectMeta }>('GET', objectPath(ref), {
          accept: METADATA,
          signal,
        });
        if (found.metadata && isKnownAs(found.metadata, uid)) return 'present';
      } catch (error) {
        if (!isNotFound(error)) return 'unknown';
      }
    }
    return 'absent';
  }

  /** The copy the routing rule reads (see the router's copy-choice), from the caches. */
  private liveCopy(plan: RebalancePlan, ref: CellularObjectRef): LiveCopy {
    if (!this.options.copies.synced(plan.liveCells)) return { kind: 'wait' };
    const key = plan.table.keyOf(ref, this.options.namespaceLabels(ref.namespace));
    const decision = plan.table.route(key);
    const copies = this.options.copies.copiesOf(ref);
    const old = copies.get(decision.oldCell);
    if (old?.labels?.[REBALANCE_STATUS_LABEL] === MIGRATING) return { kind: 'wait' };
    const target = resolveTarget(
      decision,
      'read',
      needsOldCopy(decision) ? (old ? { found: true, labels: old.labels } : { found: false }) : undefined,
    );
    const metadata = copies.get(target.cell);
    if (metadata) return { kind: 'live', cell: target.cell, metadata };
    // A key of a Down cell may still be a backup waiting for promotion, which these caches do not hold.
    if (plan.table.failedOverFrom(key)) return { kind: 'wait' };
    // Moved, and the new copy not listed yet.
    if (target.reason === 'migrated' && old) return { kind: 'wait' };
    return { kind: 'none' };
  }

  private cellClient(id: string): CellEnd['client'] {
    const cell = this.options.cell(id);
    if (!cell) throw new Error(`cell ${id} is not engaged`);
    return cell.client;
  }
}

/** Whether a reference names `owner` (by any uid clients know it by: its own, its first one). */
function namesOwner(owner: CellularObjectRef, metadata: Readonly<ObjectMeta>) {
  return (reference: OwnerReference) =>
    reference.name === owner.name &&
    groupOf(reference.apiVersion) === owner.resource.group &&
    isKnownAs(metadata, reference.uid);
}

const isForbidden = (error: unknown) => error instanceof ApiError && error.statusCode === 403;
