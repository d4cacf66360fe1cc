import {
  BACKUP_CELL_LABEL,
  BACKUP_SOURCE_ANNOTATION,
  CELL_BACKUPS,
  CELL_BACKUP_NAMESPACE,
  COPIED_FROM_ANNOTATION,
  FENCED_AT_ANNOTATION,
  FOLLOWER_LABEL,
  HELD_SPEC_ANNOTATION,
  shownGeneration,
  MIGRATED_AT_ANNOTATION,
  PRIMARY_CELL_LABEL,
  PROMOTED_FROM_ANNOTATION,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
  type CellBackup,
} from '@cellfed/api';
import {
  commitCopy,
  isAlreadyExists,
  isConflict,
  isNotFound,
  readIfExists,
  realClock,
  type Clock,
  type CopiesView,
  type KubeClient,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@cellfed/controller-kit';
import { MIGRATED, REBALANCE_STATUS_LABEL, type RouteDecision } from '@cellfed/hashing';
import type { Logger } from 'pino';
import {
  type CellSetGeneration,
  type KubeObject,
  type ObjectMeta,
  backedUpObject,
  cellBackupName,
  holdsKey,
  legacyCellBackupName,
  cellBackupOf,
  cellBackupPath,
  isCurrentBackupForm,
  collectionPath,
  formatObjectKey,
  isCellOwnObject,
  madeByItsCell,
  OBJECT_KEYS,
  objectPath,
  objectRefOf,
  type ObjectKey,
  portableObject,
  without,
  type CellularObjectRef,
  routeOf,
  annotationsBumpGeneration,
  showsOriginGeneration,
} from '@cellfed/federation';

import type { BackupMetrics, LagClock } from './backup-metrics.ts';
import { BackupError, BackupErrorCode } from './errors.ts';

/** The field manager of every write the controller makes. */
export const FIELD_MANAGER = 'cellfed-backup-controller';
/** While a cell the decision needs is not listed yet, look again this much later. */
const NOT_SYNCED_RETRY_MS = 2000;

/** The cached objects of every cell, whole: the primaries whose backups are kept. */
interface ObjectsView extends Pick<CopiesView, 'copiesOf' | 'synced'> {
  objectIn(cell: string, ref: CellularObjectRef): Readonly<KubeObject> | undefined;
}

export interface BackupReconcilerOptions {
  federation: () => CellSetGeneration | undefined;
  objects: ObjectsView;
  /** The cached metadata of every cell's CellBackups. */
  backups: Pick<CopiesView, 'copiesOf' | 'synced'>;
  cell: (id: string) => { client: Pick<KubeClient, 'request'> } | undefined;
  namespaceLabels: (namespace: string) => Record<string, string> | undefined;
  metrics: BackupMetrics;
  lag: LagClock;
  /** Told of each object promoted, so its next look (new backup, old one removed) can wait its turn. */
  onPromoted?: (key: string) => void;
  clock?: Clock;
}

/** The CellBackup of an object, as a reference its cell's cache knows (by its current or legacy name). */
function backupRefOf(ref: CellularObjectRef, name = cellBackupName): CellularObjectRef {
  return { resource: CELL_BACKUPS, namespace: CELL_BACKUP_NAMESPACE, name: name(ref) };
}

/**
 * Keeps one object's backup right; the key is `resource.group/namespace/name` (no cell: the object's cell and
 * its backup cell are one unit of work). Level-based, from the caches and the CellSet alone:
 * - the object is served from a live cell → its CellBackup in the key's backup cell (the next cell clockwise)
 *   holds the version served; a backup anywhere else (the ring changed) is deleted;
 * - it is not, and its cell is Down → the backup in the cell that now owns the key is promoted: the real
 *   object is created from it (the next reconcile backs it up anew and removes that backup);
 * - it is not, and no cell of it is Down → it was deleted: so are its backups.
 */
export class BackupReconciler implements Reconciler<ObjectKey> {
  private readonly options: BackupReconcilerOptions;
  private readonly clock: Clock;

  constructor(options: BackupReconcilerOptions) {
    this.options = options;
    this.clock = options.clock ?? realClock;
  }

  async reconcile({ key: objectKey, signal, log }: ReconcileRequest<ObjectKey>): Promise<ReconcileResult> {
    // The lag tracker and the promotion hook know the object by its key as the queue writes it.
    const key = OBJECT_KEYS.format(objectKey);
    const federation = this.options.federation();
    const ref = federation && objectRefOf(objectKey, federation.resources);
    if (!federation || !ref || isCellOwnObject(ref)) {
      this.options.lag.forget(key);
      return {};
    }
    const decision = routeOf(federation.table, ref, this.options.namespaceLabels);
    // What a cell's controllers made (a CronJob's Jobs) is that cell's work, never backed up: promoted into
    // another cell, it would run again there, beside what the promoted owner makes.
    const copies = new Map(
      [...this.options.objects.copiesOf(ref)].filter(([, metadata]) => !madeByItsCell(metadata)),
    );
    const primary = servedCell(decision, copies);
    const backupCell = primary && federation.table.backupOf(decision.key, primary);
    // Decide only on listed caches: an unlisted cell would look like a deleted object or a missing backup.
    const needed = [decision.oldCell, decision.newCell, ...(backupCell ? [backupCell] : [])];
    if (!this.options.objects.synced(needed) || !this.options.backups.synced(needed)) {
      log.debug({ cells: needed }, 'caches not listed yet');
      return { requeueAfterMs: NOT_SYNCED_RETRY_MS };
    }
    const backupRef = backupRefOf(ref);
    const live = ([cell]: [string, Readonly<ObjectMeta>]) => federation.liveCells.includes(cell);
    const atName = [...this.options.backups.copiesOf(backupRef)].filter(live);
    // Only a backup that holds this key is this object's: one at its name that holds another is left alone.
    const holders = new Map(atName.filter(([, metadata]) => holdsKey(metadata, ref)));
    const taken = atName.filter(([, metadata]) => !holdsKey(metadata, ref));
    // Backups written under the earlier name: promoted if need be, deleted once the current one is written.
    const legacyRef = backupRefOf(ref, legacyCellBackupName);
    const legacy = new Map(
      [...this.options.backups.copiesOf(legacyRef)]
        .filter(live)
        .filter(([, metadata]) => holdsKey(metadata, ref)),
    );
    if (primary) {
      const served = copies.get(primary);
      if (served?.annotations?.[PROMOTED_FROM_ANNOTATION] !== undefined) {
        // Created from its backup by an attempt that stopped before committing it: commit it first, with
        // the field managers its backup here holds. Its commit is a change, which brings it back here.
        const [fromRef, from] = holders.has(primary) ? [backupRef, holders] : [legacyRef, legacy];
        await this.commitPromotion(ref, primary, fromRef, from.get(primary), served, log, signal);
        return {};
      }
      if (backupCell) {
        if (taken.some(([cell]) => cell === backupCell))
          throw nameTaken(
            backupRef.name,
            backupCell,
            taken.filter(([cell]) => cell === backupCell).map(([, metadata]) => metadata),
          );
        await this.keepBackup(ref, key, primary, backupCell, holders.get(backupCell), log, signal);
      } else this.options.lag.forget(key);
      for (const cell of holders.keys())
        if (cell !== backupCell) await this.deleteBackup(cell, backupRef, log, signal);
      for (const cell of legacy.keys()) await this.deleteBackup(cell, legacyRef, log, signal);
      return {};
    }
    this.options.lag.forget(key);
    const down = federation.table.failedOverFrom(decision.key);
    const target = decision.oldCell;
    const [promotableRef, promotable] = holders.has(target)
      ? [backupRef, holders.get(target)]
      : [legacyRef, legacy.get(target)];
    if (
      down &&
      promotable?.labels?.[BACKUP_CELL_LABEL] === target &&
      promotable.labels[PRIMARY_CELL_LABEL] === down
    ) {
      await this.promote(ref, target, down, promotableRef, promotable.resourceVersion, log, signal);
      return {};
    }
    if (down) {
      // Its cell failed and nothing here can bring it back; what backups there are stay for an operator.
      if (holders.size + legacy.size > 0)
        log.warn(
          { down, holders: [...holders.keys(), ...legacy.keys()] },
          'no backup to promote in the serving cell',
        );
      return {};
    }
    for (const cell of holders.keys()) await this.deleteBackup(cell, backupRef, log, signal);
    for (const cell of legacy.keys()) await this.deleteBackup(cell, legacyRef, log, signal);
    return {};
  }

  private async keepBackup(
    ref: CellularObjectRef,
    key: string,
    primary: string,
    backupCell: string,
    existing: Readonly<ObjectMeta> | undefined,
    log: Logger,
    signal: AbortSignal,
  ): Promise<void> {
    const object = this.options.objects.objectIn(primary, ref);
    if (!object) return;
    // Up to date: the version served, the cells, and the current form (an earlier one is written anew).
    if (
      existing !== undefined &&
      isCurrentBackupForm(existing) &&
      existing.annotations?.[SOURCE_RESOURCE_VERSION_ANNOTATION] === object.metadata.resourceVersion &&
      existing.labels?.[PRIMARY_CELL_LABEL] === primary &&
      existing.labels[BACKUP_CELL_LABEL] === backupCell
    ) {
      this.options.lag.forget(key);
      return;
    }
    const backup = cellBackupOf(object, ref, { primaryCell: primary, backupCell });
    await writeBackup(this.client(backupCell), backup, ref, existing?.resourceVersion, signal);
    this.options.metrics.operations.inc({ operation: 'written' });
    const lag = this.options.lag.replicated(key, this.clock.now());
    if (lag !== undefined) this.options.metrics.lagSeconds.observe(lag);
    log.debug(
      { primary, backupCell, resourceVersion: object.metadata.resourceVersion, lagSeconds: lag },
      'backup written',
    );
  }

  private async deleteBackup(
    cell: string,
    backupRef: CellularObjectRef,
    log: Logger,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      await this.client(cell).request('DELETE', cellBackupPath(backupRef.name), { signal });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.options.metrics.operations.inc({ operation: 'deleted' });
    log.debug({ backupCell: cell }, 'stale backup deleted');
  }

  /**
   * Creates the real object in `target` from its backup there, marked `promoted-from` (the router refuses
   * writes to it), then commits it: its field managers written back and the mark removed, in one write. The
   * backup is read at the version the cache holds, or newer: the apiserver answers that from its watch cache,
   * where a read of the latest goes to etcd and costs it about three times the CPU (a lost cell's keys are
   * promoted by the thousand).
   */
  private async promote(
    ref: CellularObjectRef,
    target: string,
    down: string,
    backupRef: CellularObjectRef,
    cachedVersion: string | undefined,
    log: Logger,
    signal: AbortSignal,
  ): Promise<void> {
    const client = this.client(target);
    const backup = await readBackup(client, backupRef, cachedVersion, signal);
    if (!backup) return; // the cache was behind: the next event says what happened
    if (!holdsKey(backup.metadata, ref)) throw nameTaken(backupRef.name, target, [backup.metadata]);
    const held = backedUpObject(backup);
    if (!held)
      throw new BackupError(
        BackupErrorCode.UnreadableBackup,
        `backup ${backupRef.name} in cell ${target} holds no object that can be read`,
      );
    const { object } = portableObject(held, ref);
    const promoted = markedPromoted(withoutMoveMarks(object), down);
    const create = () =>
      client.request<KubeObject>('POST', collectionPath(ref), {
        body: promoted,
        query: { fieldManager: FIELD_MANAGER },
        signal,
      });
    const path = objectPath(ref);
    let written: KubeObject | undefined;
    try {
      written = await create().catch(async (error: unknown) => {
        // The namespace is mirrored into every cell, but a cell may not have it yet: create it, then again.
        if (!isNotFound(error) || ref.namespace === '') throw error;
        await ensureNamespace(client, ref.namespace, signal);
        return create();
      });
    } catch (error) {
      // Created by an earlier attempt that stopped before committing it; or a follower copy (a pod template
      // in this cell names the object), which the object now replaces.
      if (!isAlreadyExists(error)) throw error;
      written = await replaceFollower(client, path, promoted, signal);
    }
    await commitCopy({
      client,
      path,
      mark: PROMOTED_FROM_ANNOTATION,
      // A backup of a moved Job not yet committed is suspended: the promotion's commit sets it back.
      heldSpec: HELD_SPEC_ANNOTATION,
      managedFields: object.metadata.managedFields,
      ...generationOf(ref, object.metadata),
      ...(written ? { known: written.metadata } : {}),
      fieldManager: FIELD_MANAGER,
      signal,
    });
    // The backup in `target` is left for the object's next reconcile, which writes the new backup and deletes
    // this one: while a cell's keys are promoted, promotions go first and each costs three requests.
    this.options.onPromoted?.(formatObjectKey(ref));
    this.options.metrics.operations.inc({ operation: 'promoted' });
    log.info(
      { cell: target, down, version: backup.metadata.annotations?.[SOURCE_RESOURCE_VERSION_ANNOTATION] },
      'backup promoted',
    );
  }

  /**
   * Commits a promotion found uncommitted in `cell` (the object carries `promoted-from`): the field managers
   * come from its backup there, if it is still there; the mark goes either way.
   */
  private async commitPromotion(
    ref: CellularObjectRef,
    cell: string,
    backupRef: CellularObjectRef,
    backup: Readonly<ObjectMeta> | undefined,
    cached: Readonly<ObjectMeta>,
    log: Logger,
    signal: AbortSignal,
  ): Promise<void> {
    const client = this.client(cell);
    const held = backup && (await readBackup(client, backupRef, backup.resourceVersion, signal));
    const backedUp = held ? backedUpObject(held)?.metadata : undefined;
    const managedFields = backedUp?.managedFields;
    const committed = await commitCopy({
      client,
      path: objectPath(ref),
      mark: PROMOTED_FROM_ANNOTATION,
      heldSpec: HELD_SPEC_ANNOTATION,
      managedFields,
      ...(backedUp ? generationOf(ref, backedUp) : {}),
      known: cached,
      fieldManager: FIELD_MANAGER,
      signal,
    });
    // Not written: committed already, and the cache has not seen it yet.
    if (committed)
      log.info({ cell, down: cached.annotations?.[PROMOTED_FROM_ANNOTATION] }, 'promotion committed');
  }

  private client(cell: string): Pick<KubeClient, 'request'> {
    const engaged = this.options.cell(cell);
    if (!engaged) throw new BackupError(BackupErrorCode.CellNotEngaged, `cell ${cell} is not engaged`);
    return engaged.client;
  }
}

/**
 * The cell whose copy of the object the router serves, among the two the routing rule names: the old cell
 * until its copy says `migrated`, then the new one; undefined when neither has it.
 */
function servedCell(
  decision: RouteDecision,
  copies: ReadonlyMap<string, Readonly<ObjectMeta>>,
): string | undefined {
  const old = copies.get(decision.oldCell);
  if (decision.case === 4) return old ? decision.oldCell : undefined;
  if (old && old.labels?.[REBALANCE_STATUS_LABEL] !== MIGRATED) return decision.oldCell;
  return copies.has(decision.newCell) ? decision.newCell : undefined;
}

async function ensureNamespace(
  client: Pick<KubeClient, 'request'>,
  namespace: string,
  signal: AbortSignal,
): Promise<void> {
  await client
    .request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
      signal,
    })
    .catch((error: unknown) => {
      if (!isAlreadyExists(error)) throw error;
    });
}

/**
 * Creates a backup, or replaces it on the version the cache knows (`known`). Plain writes, not server-side
 * apply: the backup is the controller's alone, and an apply costs the cell's apiserver about a fifth more
 * CPU (the backup benchmark's `cellCpuMicrosPerWrite`), on every change of every object. A cache behind
 * (AlreadyExists, Conflict) costs one read and one more write.
 */
async function writeBackup(
  client: Pick<KubeClient, 'request'>,
  backup: CellBackup,
  ref: CellularObjectRef,
  known: string | undefined,
  signal: AbortSignal,
): Promise<void> {
  const path = cellBackupPath(backup.metadata.name);
  const create = () =>
    client.request('POST', cellBackupPath(), {
      body: backup,
      query: { fieldManager: FIELD_MANAGER },
      signal,
    });
  const replace = (resourceVersion: string) =>
    client.request('PUT', path, {
      body: { ...backup, metadata: { ...backup.metadata, resourceVersion } },
      query: { fieldManager: FIELD_MANAGER },
      signal,
    });
  try {
    await (known === undefined ? create() : replace(known));
  } catch (error) {
    // The cache is behind: the backup is there already, or changed, or went.
    if (!isConflict(error) && !isNotFound(error)) throw error;
    const current = await readIfExists<KubeObject>(client, path, { signal });
    if (current && !holdsKey(current.metadata, ref))
      throw nameTaken(backup.metadata.name, backup.metadata.labels?.[BACKUP_CELL_LABEL] ?? '', [
        current.metadata,
      ]);
    await (current?.metadata.resourceVersion ? replace(current.metadata.resourceVersion) : create());
  }
}

/** The error for a CellBackup name that holds another object's backup in `cell`. */
function nameTaken(name: string, cell: string, taken: readonly Readonly<ObjectMeta>[]): BackupError {
  const holds = taken.map((metadata) => metadata.annotations?.[BACKUP_SOURCE_ANNOTATION] ?? 'no key');
  return new BackupError(
    BackupErrorCode.BackupNameTaken,
    `the CellBackup ${name} in cell ${cell} holds another object's backup (${holds.join(', ')}): it is neither written over, deleted nor promoted for this object`,
  );
}

/**
 * A promoted object keeps what it is (its identity across copies, its held owner references) but none of the
 * marks of a move it was in when it was backed up: the label (`migrating`, `migrated`), `copied-from` (an
 * uncommitted copy goes when its source does), and the fence's times. `held-spec` stays: an uncommitted Job
 * copy was backed up suspended, and the promotion's commit sets back what it holds.
 */
function withoutMoveMarks(object: KubeObject): KubeObject {
  const { labels, annotations, ...metadata } = object.metadata;
  const kept = without(labels, [REBALANCE_STATUS_LABEL]);
  const notes = without(annotations, [COPIED_FROM_ANNOTATION, FENCED_AT_ANNOTATION, MIGRATED_AT_ANNOTATION]);
  return {
    ...object,
    metadata: {
      ...metadata,
      ...(Object.keys(kept).length > 0 ? { labels: kept } : {}),
      ...(Object.keys(notes).length > 0 ? { annotations: notes } : {}),
    },
  };
}

/** `object` as created from its backup: marked until its promotion is committed. */
function markedPromoted(object: KubeObject, down: string): KubeObject {
  return {
    ...object,
    metadata: {
      ...object.metadata,
      annotations: { ...object.metadata.annotations, [PROMOTED_FROM_ANNOTATION]: down },
    },
  };
}

/** The CellBackup `backupRef` in a cell, at `version` or newer; undefined when it is not there. */
function readBackup(
  client: Pick<KubeClient, 'request'>,
  backupRef: CellularObjectRef,
  version: string | undefined,
  signal: AbortSignal,
): Promise<(CellBackup & { metadata: ObjectMeta }) | undefined> {
  return readIfExists(client, cellBackupPath(backupRef.name), {
    ...(version ? { query: { resourceVersion: version } } : {}),
    signal,
  });
}

/**
 * Writes `object` over a follower copy at `path` (see FOLLOWER_LABEL) and answers it as written; anything
 * else there is left (undefined).
 */
async function replaceFollower(
  client: Pick<KubeClient, 'request'>,
  path: string,
  object: KubeObject,
  signal: AbortSignal,
): Promise<KubeObject | undefined> {
  const existing = await client.request<KubeObject>('GET', path, { signal });
  if (existing.metadata.labels?.[FOLLOWER_LABEL] === undefined) return undefined;
  return client.request<KubeObject>('PUT', path, {
    body: { ...object, metadata: { ...object.metadata, resourceVersion: existing.metadata.resourceVersion } },
    query: { fieldManager: FIELD_MANAGER },
    signal,
  });
}

/** What a promotion's commit records of the generation clients knew of the object backed up. */
function generationOf(
  ref: CellularObjectRef,
  metadata: Readonly<ObjectMeta>,
): { shownGeneration?: number; annotationsBumpGeneration: boolean } {
  return {
    ...(metadata.generation === undefined || !showsOriginGeneration(ref.resource)
      ? {}
      : { shownGeneration: shownGeneration(metadata.generation, metadata.annotations) }),
    annotationsBumpGeneration: annotationsBumpGeneration(ref.resource),
  };
}
