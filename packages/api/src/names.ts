/**
 * Every `cellfed.io/*` name cellfed puts on objects: labels, annotations, finalizers, and the Event reason
 * one component leaves for another. Where it is set and who reads it is said beside each.
 */

export { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL, SHARD_BY_LABEL } from '@cellfed/hashing';

// ---- Identity of an object across its copies ----

/**
 * The uid clients know an object by, on every copy made of it in another cell (a move, a promoted backup):
 * each apiserver gives what it creates a uid of its own, and owner references written before the copy name
 * the first one.
 */
export const ORIGIN_UID_ANNOTATION = 'cellfed.io/uid';

/** Likewise the creation time clients know: the first copy's `metadata.creationTimestamp`. */
export const ORIGIN_CREATED_ANNOTATION = 'cellfed.io/created';

/**
 * Likewise the generation clients know, on a committed copy: `shown:own`, the generation clients knew when
 * the copy's own `metadata.generation` was `own` (a copy's apiserver counts from 1). The router shows
 * `shown + generation - own` for the generation and every `observedGeneration` of the object's status.
 */
export const ORIGIN_GENERATION_ANNOTATION = 'cellfed.io/generation';

/** The generation clients know of an object whose copy stores `generation` (see ORIGIN_GENERATION_ANNOTATION). */
export function shownGeneration(
  generation: number,
  annotations: Readonly<Record<string, string>> | undefined,
): number {
  const origin = /^(\d+):(\d+)$/.exec(annotations?.[ORIGIN_GENERATION_ANNOTATION] ?? '');
  return origin ? Number(origin[1]) + generation - Number(origin[2]) : generation;
}

/**
 * On a new copy until its move is committed: `cell/uid` of the copy it was made from. A copy that still
 * carries it is not the object yet (if its source is gone, it goes too), so only the rebalance controller
 * ever sets or removes it.
 */
export const COPIED_FROM_ANNOTATION = 'cellfed.io/copied-from';

// ---- A move's fence and its old copy ----

/** On an old copy, set with `migrating` in the same write: when the write fence went up (RFC 3339). */
export const FENCED_AT_ANNOTATION = 'cellfed.io/fenced-at';
/** On an old copy, set with `migrated` in the same write: when the new copy took over. */
export const MIGRATED_AT_ANNOTATION = 'cellfed.io/migrated-at';
/** On the dry-run Namespace the controller creates to learn whether a cell enforces the fence policy yet. */
export const FENCE_PROBE_LABEL = 'cellfed.io/fence-probe';

/**
 * On an old copy the rebalance controller quiesced: the spec fields it changed, as they were (JSON), so the
 * old copy can be brought back by hand within `deleteAfter` if a move has to be undone.
 */
export const QUIESCED_ANNOTATION = 'cellfed.io/quiesced-from';
/**
 * On a new copy created held (a moved Job or CronJob, created suspended so that its new cell runs nothing of
 * it before the move is committed): the spec fields to set back (a JSON merge patch), which the commit does
 * and removes this in the same write. It travels with an uncommitted copy that moves on or is backed up.
 */
export const HELD_SPEC_ANNOTATION = 'cellfed.io/held-spec';
/**
 * A node label no node carries: an old DaemonSet copy selects it, so its cell's DaemonSet controller deletes
 * the copy's pods from every node (whatever its update strategy), as it does for any node a DaemonSet no
 * longer selects.
 */
export const QUIESCED_NODE_LABEL = 'cellfed.io/quiesced';

// ---- Owner references held out of a cell's garbage collector ----

/**
 * Where a cell keeps the owner references of an object written through the router. A cell's garbage
 * collector deletes an object whose owners it cannot find, and the owners of a cellular object are often
 * elsewhere: in another cell (their key hashes elsewhere), in the control plane (a ServiceAccount, a custom
 * resource) or in the cell under another uid (after a move). So the router holds them here, out of the GC's
 * sight, shows them to clients as `metadata.ownerReferences`, and cellfed's own collector enforces them.
 */
export const HELD_OWNERS_ANNOTATION = 'cellfed.io/owner-references';

/**
 * On an owner deleted with orphan propagation through the router: its held dependents must lose their
 * reference to it, not be collected with it, and only cellfed's collector can see them. The router adds it
 * before the delete (as the apiserver adds `orphan` for the cell's own collector); the collector removes it
 * once no held dependent names the owner.
 */
export const ORPHAN_FINALIZER = 'cellfed.io/orphan-held-dependents';

/**
 * On an owner deleted with foreground propagation through the router: it must stay until its held
 * dependents are gone too, as it stays (with `foregroundDeletion`) until the cell's collector has deleted
 * its native ones. The router adds it before the delete; cellfed's collector deletes the held dependents
 * and removes it once none is left.
 */
export const FOREGROUND_FINALIZER = 'cellfed.io/foreground-held-dependents';

/**
 * A control-plane object deleted through the router with orphan propagation may own objects in the cells
 * whose references cellfed holds. Kubernetes' collector in the control plane cannot see them, and cellfed's
 * collector does not watch the control plane: it finds such an owner gone on its next look and would delete
 * the dependents. So the router records the orphaning first, as an Event on the object with this reason,
 * and the collector reads it before it takes a gone owner's dependents: it removes the reference instead.
 * Events expire (kube-apiserver's `--event-ttl`, 1 h by default), long after the collector's next look.
 */
export const ORPHANED_DEPENDENTS_REASON = 'OrphanHeldDependents';

/**
 * The reporting controller of the router's Events: the collector trusts an orphaning record only from it
 * (an Event any other controller wrote with the same reason is not the router's word).
 */
export const CELL_ROUTER_CONTROLLER = 'cellfed.io/cell-router';

// ---- Copies a cell keeps of what lives elsewhere ----

/**
 * On a ConfigMap or Secret the rebalance controller keeps in a cell because a pod template there names it
 * while the object itself lives elsewhere (another cell, or the control plane): the id of where it lives.
 * Such a copy is the cell's only, never the object: informers of cellular objects leave it out, nothing
 * moves or backs it up, and a move or a promotion into its cell writes the object over it.
 */
export const FOLLOWER_LABEL = 'cellfed.io/followed-from';
/**
 * On a follower copy whose source is in a cell: the source's resourceVersion when it was copied, so an
 * unchanged source (its version in the cache) is not read again.
 */
export const FOLLOWED_VERSION_ANNOTATION = 'cellfed.io/followed-version';

/**
 * On every object the mirror put in a cell, and on a namespace the router made in a cell ahead of a write:
 * the mirror may update it, and deletes it when the control plane's goes.
 */
export const MIRRORED_LABEL = 'cellfed.io/mirrored-from';
/** The value of MIRRORED_LABEL: where a mirrored object comes from. */
export const MIRRORED_FROM_CONTROL_PLANE = 'control-plane';
/**
 * On a namespace the mirror or the router made in a cell: the uid of the control-plane namespace it stands
 * for. A cell's namespace is the control plane's by name and uid: one left from an earlier namespace of the
 * same name (a cell that was unreachable while it was deleted) is deleted, never taken for the new one.
 */
export const NAMESPACE_UID_ANNOTATION = 'cellfed.io/namespace-uid';
/**
 * On every control-plane namespace, put by the rebalance controller: its deletion ends only once no live cell
 * has its copy (and so its contents) any more, as one apiserver's namespace ends after its contents.
 */
export const CELLS_FINALIZER = 'cellfed.io/cells';
/** On mirrored CRDs and shared objects: a hash of the content applied, so an unchanged one is not applied again. */
export const MIRROR_HASH_ANNOTATION = 'cellfed.io/mirror-hash';

// ---- ResourceQuota shares ----

/**
 * On the copy of a control-plane ResourceQuota the rebalance controller keeps in each cell: the cell's share
 * of the quota. Its `spec.hard` is the share plus what the cell holds that is not the federation's (its own
 * `kube-root-ca.crt`, follower copies), so the cell's own quota admission refuses what would exceed the
 * share (docs/governance.md).
 */
export const QUOTA_SHARE_LABEL = 'cellfed.io/quota-share';
/** On a cell's quota copy: its share of each hard limit, as JSON (`{"pods":"3","requests.cpu":"500m"}`). */
export const QUOTA_SHARE_ANNOTATION = 'cellfed.io/quota-share';
/**
 * On a cell's quota copy: when (RFC 3339) a share was last drawn from it for another cell. The amount drawn
 * is on its way to that cell; the controller does not hand out a shortfall while a draw this recent may
 * still be giving it.
 */
export const QUOTA_DRAWN_AT_ANNOTATION = 'cellfed.io/quota-drawn-at';
/**
 * On a cell's quota copy: when (RFC 3339) its share last changed. A draw that finds nothing to take while a
 * copy changed a moment ago (the controller dividing unused share again, lowered here and not yet raised
 * there) tries again rather than refuse.
 */
export const QUOTA_CHANGED_AT_ANNOTATION = 'cellfed.io/quota-changed-at';
/**
 * On a control-plane ResourceQuota, its own uid: every live cell holds its share, in force. The chart's
 * admission policy keeps the quota controller from writing the quota's status before (docs/governance.md),
 * so a status seen means the cells refuse what exceeds the limit.
 */
export const QUOTA_DIVIDED_ANNOTATION = 'cellfed.io/quota-divided';

// ---- Backups (CellBackup objects) ----

/** On a backup: the cell that holds it. */
export const BACKUP_CELL_LABEL = 'cellfed.io/backup-cell-id';
/** On a backup: the cell that holds the real object. */
export const PRIMARY_CELL_LABEL = 'cellfed.io/primary-cell-id';
/** On a backup: the key of the object it copies (`deployments.apps/namespace/name`). */
export const BACKUP_SOURCE_ANNOTATION = 'cellfed.io/source';
/** On a backup: the resourceVersion of the primary it copies, in the primary's cell. */
export const SOURCE_RESOURCE_VERSION_ANNOTATION = 'cellfed.io/source-resource-version';
/**
 * On a backup: the form its object is kept in (`json`: `spec.data`). A backup without it is of the earlier
 * form (`spec.object`) and is written anew, so the metadata alone tells the controller which to migrate.
 */
export const BACKUP_FORMAT_ANNOTATION = 'cellfed.io/backup-format';
/**
 * On an object the backup controller created from its backup, until the promotion is committed (its field
 * managers written back, this mark removed in the same write): the Down cell it was lost with. The router
 * refuses writes to an object that carries it, as it does while only the backup exists: a client's write
 * that landed before the field managers would be undone by them, or would leave its fields to the controller.
 */
export const PROMOTED_FROM_ANNOTATION = 'cellfed.io/promoted-from';

/**
 * On a CellBackup of a Down cell's object, set by the router (as itself, once a caller allowed the write was
 * refused for it): a client is waiting to write this object. The backup controller promotes such a key
 * before the rest of the Down cell's keys. The value is when it was asked (RFC 3339), for people reading it.
 */
export const PROMOTION_REQUESTED_ANNOTATION = 'cellfed.io/promotion-requested';

// ---- Router presence ----

/** On every router Lease: the CellSet it routes by (so routers of other CellSets are told apart). */
export const ROUTER_CELLSET_LABEL = 'cellfed.io/router-cellset';
/** On every router Lease: the CellSet generation that replica routes with now. */
export const LOADED_GENERATION_ANNOTATION = 'cellfed.io/loaded-cellset-generation';

// ---- Node-port claims and component names ----

/**
 * On a Service in cellfed's namespace of the control plane that holds, in the control plane's allocator, the
 * node ports of one of the federation's Services (which lives in a cell): the router writes it before a cell
 * gives the ports out, so no two cells give out the same one (docs/routing.md, "Node ports").
 */
export const NODE_PORT_CLAIM_LABEL = 'cellfed.io/node-port-claim';
/** On a node-port claim: `namespace/name` of the Service whose ports it holds (its own name is a hash of it). */
export const NODE_PORTS_OF_ANNOTATION = 'cellfed.io/node-ports-of';
/** On a node-port claim a create took over: when (RFC 3339); the claim collector's grace counts from it. */
export const NODE_PORTS_CLAIMED_AT_ANNOTATION = 'cellfed.io/node-ports-claimed-at';
/**
 * On the reserved-marks policy in a cell: the user names it exempts as cellfed's components (a JSON array),
 * as the rebalance controller wrote it. The router reads it and serves no caller by any of them.
 */
export const COMPONENT_USERS_ANNOTATION = 'cellfed.io/component-users';
