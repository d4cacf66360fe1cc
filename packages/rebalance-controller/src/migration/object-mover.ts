// Over 400 lines on purpose: every write of the migration protocol (fence, copy, status, history, migrated,
// commit, unfence, delete) is here, each preconditioned on the one before it, so one step can be checked
// against the marks the others leave without opening another file.
import {
  COPIED_FROM_ANNOTATION,
  FENCED_AT_ANNOTATION,
  HELD_SPEC_ANNOTATION,
  MIGRATED_AT_ANNOTATION,
  ORIGIN_GENERATION_ANNOTATION,
  shownGeneration,
} from '@cellfed/api';
import {
  ApiError,
  commitCopy,
  errorMessage,
  isAlreadyExists,
  isConflict,
  isNotFound,
  readIfExists,
  type Clock,
  quotaRefusalIn,
  writeDrawingQuota,
  type QuotaDraw,
} from '@cellfed/controller-kit';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import type { Logger } from 'pino';
import {
  MERGE_PATCH,
  resourcePath,
  type KubeList,
  type KubeObject,
  type ObjectMeta,
  collectionPath,
  objectPath,
  type CellularObjectRef,
  annotationsBumpGeneration,
  showsOriginGeneration,
} from '@cellfed/federation';

import type { CellEnd } from '../cell-end.ts';
import { RebalanceError, RebalanceErrorCode } from '../errors.ts';
import { FIELD_MANAGER, copiedFromCell } from './migration-marks.ts';
import { copyForNewCell } from './object-copy.ts';
import { quiescePatch, quiesces } from './quiesce.ts';
import {
  historyCopy,
  historyOf,
  historyRef,
  historyResourceOf,
  historySelector,
} from './revision-history.ts';
import type { StatusSubresources } from './status-subresources.ts';

type CellClient = CellEnd['client'];

/** One object to move from one cell to another. */
export interface Move {
  readonly ref: CellularObjectRef;
  readonly from: CellEnd;
  readonly to: CellEnd;
  readonly signal: AbortSignal;
  readonly log: Logger;
  /**
   * Whether the CellSet generation the move started under is still the one loaded; checked before the
   * `migrated` label, so a move never completes towards a cell a newer generation no longer names.
   */
  readonly planStillCurrent?: () => boolean;
  /** The old copy's metadata as last seen in the cache: fencing on its version saves reading the object. */
  readonly cached?: Readonly<ObjectMeta>;
}

export type MoveOutcome =
  /** Steps 1–3 done now; the old copy was fenced for `fenceMs`. */
  | { readonly result: 'moved'; readonly fenceMs: number }
  /** The old copy was already labelled `migrated` (an earlier attempt got that far). */
  | { readonly result: 'already-moved' }
  /** The old copy is gone (a user deleted it mid-migration); any copy made of it is gone too. */
  | { readonly result: 'source-gone' }
  /** The old copy is being deleted: it is not moved. */
  | { readonly result: 'source-deleting' }
  /** The new cell's quota refused the copy even after a draw: the old copy stays fenced, tried again soon. */
  /** `refusal`: the new cell's words (its quota, what was asked, used and limited). */
  | { readonly result: 'quota-wait'; readonly refusal: string };

/** An old copy found labelled `migrated` when the move began: an earlier attempt handed over. */
class AlreadyMigrated {
  readonly old: KubeObject;

  constructor(old: KubeObject) {
    this.old = old;
  }
}

/**
 * The migration of one object (docs/migration.md), every step idempotent and recorded on the objects, so a crash or a
 * lost leader anywhere resumes correctly from what the cells say:
 * 1. label the old copy `migrating` (resourceVersion precondition): the router fences writes;
 * 2. copy it to the new cell (an existing copy there is replaced, never trusted), status through `/status`,
 *    and its revision history (revision-history.ts), owned by the new copy;
 * 3. label the old copy `migrated`, again on the resourceVersion that was copied: a write that slipped in is
 *    caught and the copy redone; the router now sends everything to the new copy;
 * then the new copy is committed (its `copied-from` mark removed) and the old one is deleted after
 * `deleteAfter` ({@link deleteOldCopy}).
 */
export class ObjectMover {
  private readonly clock: Clock;
  private readonly statusSubresources: StatusSubresources;
  private readonly quota: Pick<QuotaDraw, 'drawTo'> | undefined;
  private readonly onQuotaRefused: ((namespace: string) => void) | undefined;

  constructor(options: {
    clock: Clock;
    statusSubresources: StatusSubresources;
    /** Draws quota share into a cell whose quota admission refuses a move's copy; none: refused as it comes. */
    quota?: Pick<QuotaDraw, 'drawTo'>;
    /** Told the namespace of a move its new cell's quota refused even after a draw (it is retried). */
    onQuotaRefused?: (namespace: string) => void;
  }) {
    this.clock = options.clock;
    this.statusSubresources = options.statusSubresources;
    this.quota = options.quota;
    this.onQuotaRefused = options.onQuotaRefused;
  }

  async move(move: Move): Promise<MoveOutcome> {
    const { ref, from, signal } = move;
    const fenced = await this.fence(move);
    if (fenced === 'gone') return this.sourceGone(move);
    if (fenced === 'deleting') return { result: 'source-deleting' };
    if (fenced instanceof AlreadyMigrated) {
      await this.commit(move.to, ref, signal, fenced.old.metadata);
      return { result: 'already-moved' };
    }
    let old = fenced;
    const fencedAt = Date.parse(old.metadata.annotations?.[FENCED_AT_ANNOTATION] ?? '');
    let copy: KubeObject;
    try {
      copy = await this.writeCopy(move, old);
    } catch (error) {
      if (!quotaRefusalIn(error)) throw error;
      // The fenced old copy frees its share once the quota controller counts it apart: ask it to, and
      // come back when it has (a wait, not a failure).
      this.onQuotaRefused?.(ref.namespace);
      return { result: 'quota-wait', refusal: errorMessage(error) };
    }
    await this.copyHistory(move, old, copy);
    // Writes through the router are fenced, but the old cell's own controllers still write status
    // (a Deployment's conditions, say): a change of status alone is copied again, anything else redoes the copy.
    for (let attempt = 0; ; attempt++) {
      if (move.planStillCurrent && !move.planStillCurrent()) {
        throw new RebalanceError(
          RebalanceErrorCode.PlanChanged,
          'the CellSet changed during the move; starting again with the new one',
        );
      }
      try {
        await this.label(from.client, ref, old.metadata, MIGRATED, MIGRATED_AT_ANNOTATION, signal);
        break;
      } catch (error) {
        if (isNotFound(error)) return this.sourceGone(move);
        if (!isConflict(error)) throw error;
        const now = await read(from.client, ref, signal);
        if (!now) return this.sourceGone(move);
        if (attempt >= 5 || contentOf(now) !== contentOf(old)) {
          throw new RebalanceError(
            RebalanceErrorCode.ChangedWhileFenced,
            `${from.id}: the old copy changed while fenced (resourceVersion ${old.metadata.resourceVersion ?? '?'} → ${now.metadata.resourceVersion ?? '?'}); copying again`,
            { cause: error },
          );
        }
        old = now;
        copy = (await this.copyStatus(move, old)) ?? copy;
      }
    }
    await commitNewCopy(move.to, ref, signal, old.metadata, copy.metadata);
    const now = this.clock.now();
    return { result: 'moved', fenceMs: Number.isNaN(fencedAt) ? 0 : Math.max(0, now - fencedAt) };
  }

  /**
   * Step 1: the old copy labelled `migrating`, as it is once fenced. The cached version is usually current,
   * so the fence goes on it straight away and its answer is the object (no read); a stale cache costs a read.
   */
  private async fence(move: Move): Promise<KubeObject | 'gone' | 'deleting' | AlreadyMigrated> {
    const { ref, from, signal, cached } = move;
    if (cached?.resourceVersion && !cached.deletionTimestamp && !cached.labels?.[REBALANCE_STATUS_LABEL]) {
      try {
        return await this.label(from.client, ref, cached, MIGRATING, FENCED_AT_ANNOTATION, signal);
      } catch (error) {
        if (isNotFound(error)) return 'gone';
        if (!isConflict(error)) throw error;
      }
    }
    const old = await read(from.client, ref, signal);
    if (!old) return 'gone';
    if (old.metadata.deletionTimestamp) return 'deleting';
    const status = old.metadata.labels?.[REBALANCE_STATUS_LABEL];
    if (status === MIGRATED) return new AlreadyMigrated(old);
    if (status === MIGRATING) return old;
    return this.label(from.client, ref, old.metadata, MIGRATING, FENCED_AT_ANNOTATION, signal);
  }

  /** The old copy is gone (a user deleted it): so is any copy made of it that was never committed. */
  private async sourceGone(move: Move): Promise<MoveOutcome> {
    return { result: 'source-gone', ...(await this.dropUncommittedCopy(move)) };
  }

  /**
   * Takes the fence down from an old copy whose move was called off (the CellSet changed back before it
   * finished) and deletes the copy made of it, so the old copy serves again as if nothing happened.
   */
  async unfence(move: Move): Promise<void> {
    const { ref, from, signal } = move;
    const old = await read(from.client, ref, signal);
    if (old?.metadata.labels?.[REBALANCE_STATUS_LABEL] !== MIGRATING) return;
    await this.dropUncommittedCopy(move);
    await patch(from.client, ref, signal, {
      metadata: {
        resourceVersion: old.metadata.resourceVersion,
        labels: { [REBALANCE_STATUS_LABEL]: null },
        annotations: { [FENCED_AT_ANNOTATION]: null, ...generationKept(ref, old.metadata) },
      },
    });
  }

  /**
   * Deletes a copy if it is still the one with `uid` (step 4 for an old copy; also an uncommitted new copy);
   * false when it is gone or another object has the name.
   */
  async deleteCopy(
    cell: CellEnd,
    ref: CellularObjectRef,
    uid: string,
    signal: AbortSignal,
  ): Promise<boolean> {
    try {
      await cell.client.request('DELETE', objectPath(ref), {
        // Its dependents go with it: a Job's default is to orphan its pods, which would run on with no owner.
        body: {
          kind: 'DeleteOptions',
          apiVersion: 'v1',
          preconditions: { uid },
          propagationPolicy: 'Background',
        },
        signal,
      });
      return true;
    } catch (error) {
      // Gone already, or replaced by another object of that name: nothing of ours to delete.
      if (isNotFound(error) || isConflict(error)) return false;
      throw error;
    }
  }

  /**
   * Stops the old copy's cell from running it (see quiesce.ts) once it is `migrated`: its pods go and a
   * CronJob stops firing there, while the copy itself stays until `deleteAfter`. Read again on a conflict, a
   * few times: the old cell's controllers still write its status. Answers whether it wrote.
   */
  async quiesce(cell: CellEnd, ref: CellularObjectRef, signal: AbortSignal): Promise<boolean> {
    if (!quiesces(ref.resource)) return false;
    for (let attempt = 1; ; attempt++) {
      const old = await read(cell.client, ref, signal);
      const change = old && quiescePatch(ref.resource, old);
      if (!change) return false;
      try {
        await patch(cell.client, ref, signal, change);
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        if (!isConflict(error) || attempt >= 5) throw error;
      }
    }
  }

  /** Records `migrated-at` on an old copy someone else labelled `migrated` without it, so its clock starts. */
  async stampMigratedAt(cell: CellEnd, ref: CellularObjectRef, signal: AbortSignal): Promise<void> {
    await patch(cell.client, ref, signal, {
      metadata: { annotations: { [MIGRATED_AT_ANNOTATION]: new Date(this.clock.now()).toISOString() } },
    });
  }

  /**
   * Removes the `copied-from` mark from a new copy: from now on it is the object. It takes the old copy's
   * field managers and records the generation clients knew of it (the old copy's metadata, given or read
   * from `source`, the old copy's cell), so that whoever applied a field still owns it (a create gives every
   * field to the creator, see `commitCopy`) and clients see no new generation.
   */
  async commit(
    cell: CellEnd,
    ref: CellularObjectRef,
    signal: AbortSignal,
    old?: ObjectMeta,
    source?: CellEnd,
  ): Promise<void> {
    const from = old ?? (source ? (await read(source.client, ref, signal))?.metadata : undefined);
    await commitNewCopy(cell, ref, signal, from);
  }

  /** Deletes the copy in `to` made from `from`'s copy, if it was never committed. */
  async dropUncommittedCopy(
    move: Pick<Move, 'ref' | 'from' | 'to' | 'signal'>,
  ): Promise<{ droppedCopy?: true }> {
    const { ref, from, to, signal } = move;
    const copy = await read(to.client, ref, signal);
    if (!copy || copiedFromCell(copy.metadata) !== from.id) return {};
    const deleted = await this.deleteCopy(to, ref, copy.metadata.uid ?? '', signal);
    return deleted ? { droppedCopy: true } : {};
  }

  private async label(
    client: CellClient,
    ref: CellularObjectRef,
    metadata: Readonly<ObjectMeta>,
    value: string,
    timeAnnotation: string,
    signal: AbortSignal,
  ): Promise<KubeObject> {
    return patch(client, ref, signal, {
      metadata: {
        // In a merge patch the resourceVersion is a precondition: 409 if the object changed since it was read.
        resourceVersion: metadata.resourceVersion,
        labels: { [REBALANCE_STATUS_LABEL]: value },
        annotations: {
          [timeAnnotation]: new Date(this.clock.now()).toISOString(),
          ...generationKept(ref, metadata),
        },
      },
    });
  }

  /** Step 2: creates the copy, or replaces whatever is in the new cell under that name. */
  private async writeCopy(move: Move, old: KubeObject): Promise<KubeObject> {
    const { ref, from, to, signal } = move;
    const copy = copyForNewCell(old, ref, from.id);
    // Usually nothing is there: create first, and read what is in the way only when something is. The copy
    // counts in the new cell's quota share until the old one goes: a full share draws unused share from
    // the other cells (the old cell's frees when its copy is deleted).
    let written = await writeDrawingQuota(this.quota, to.id, ref.namespace, () =>
      createIfAbsent(to.client, ref, copy.object, signal),
    );
    if (!written) {
      const existing = await read(to.client, ref, signal);
      if (!existing)
        throw new RebalanceError(
          RebalanceErrorCode.StaleCopyInTheWay,
          `${to.id}: a copy came and went; retrying`,
        );
      move.log.info(
        { existing: existing.metadata.annotations?.[COPIED_FROM_ANNOTATION] ?? 'not a copy of this move' },
        'replacing the copy already in the new cell',
      );
      written = await this.replace(move, existing, copy.object);
    }
    return (await this.writeStatus(move, written, copy.status)) ?? written;
  }

  /**
   * Copies the old copy's revision history (a Deployment's ReplicaSets, a StatefulSet's ControllerRevisions)
   * to the new cell, owned by the new copy. What is there already is kept: a copy from an earlier attempt, or
   * the current revision the new cell's controller made first (the same name: its template's hash).
   */
  private async copyHistory(move: Move, old: KubeObject, copy: KubeObject): Promise<void> {
    const { ref, from, to, signal, log } = move;
    const history = historyResourceOf(ref.resource);
    if (!history) return;
    const selector = historySelector(old);
    const listed = await from.client.request<KubeList>(
      'GET',
      resourcePath({ ...history, namespaced: true }, ref.namespace),
      { ...(selector ? { query: { labelSelector: selector } } : {}), signal },
    );
    let copied = 0;
    for (const item of historyOf(listed.items, old)) {
      const made = await createIfAbsent(
        to.client,
        historyRef(history, item),
        historyCopy(item, copy),
        signal,
      );
      if (made) copied++;
    }
    log.debug({ history: history.resource, copied }, 'revision history copied');
  }

  /** Copies the old copy's status again onto the new copy (its status alone changed meanwhile). */
  private async copyStatus(move: Move, old: KubeObject): Promise<KubeObject | undefined> {
    const written = await read(move.to.client, move.ref, move.signal);
    return written && this.writeStatus(move, written, (old as { status?: unknown }).status);
  }

  /** Writes the status through `/status` when the resource has one; answers the object as it is then. */
  private async writeStatus(
    move: Move,
    written: KubeObject,
    status: unknown,
  ): Promise<KubeObject | undefined> {
    const { ref, to, signal } = move;
    if (status === undefined || !(await this.statusSubresources.has(to.id, to.client, ref.resource)))
      return undefined;
    return to.client.request<KubeObject>('PUT', `${objectPath(ref)}/status`, {
      body: { ...written, status },
      query: { fieldManager: FIELD_MANAGER },
      signal,
    });
  }

  private async replace(move: Move, existing: KubeObject, object: KubeObject): Promise<KubeObject> {
    const { ref, to, signal } = move;
    try {
      return await to.client.request<KubeObject>('PUT', objectPath(ref), {
        body: {
          ...object,
          metadata: { ...object.metadata, resourceVersion: existing.metadata.resourceVersion },
        },
        query: { fieldManager: FIELD_MANAGER },
        signal,
      });
    } catch (error) {
      // An immutable field differs (a Job's template, a Deployment's selector): delete it and create afresh.
      if (!(error instanceof ApiError && error.statusCode === 422)) throw error;
      await this.deleteCopy(to, ref, existing.metadata.uid ?? '', signal);
      try {
        return await create(to.client, ref, object, signal);
      } catch (createError) {
        if (!isAlreadyExists(createError)) throw createError;
        throw new RebalanceError(
          RebalanceErrorCode.StaleCopyInTheWay,
          `${to.id}: the stale copy is still being deleted (finalizers); retrying`,
          { cause: createError },
        );
      }
    }
  }
}

/**
 * What a user writes of an object: everything but status and the fields the apiserver keeps (versions,
 * managed fields), with keys in a stable order, for telling a status-only change from any other.
 */
export function contentOf(object: KubeObject): string {
  const { status: _status, metadata, ...rest } = object as KubeObject & { status?: unknown };
  const { labels, annotations, finalizers } = metadata;
  return stableJson({ ...rest, metadata: { labels, annotations, finalizers } });
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${stableJson(field)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function read(
  client: CellClient,
  ref: CellularObjectRef,
  signal: AbortSignal,
): Promise<KubeObject | undefined> {
  return readIfExists(client, objectPath(ref), { signal });
}

function create(
  client: CellClient,
  ref: CellularObjectRef,
  object: KubeObject,
  signal: AbortSignal,
): Promise<KubeObject> {
  return client.request<KubeObject>('POST', collectionPath(ref), {
    body: object,
    query: { fieldManager: FIELD_MANAGER },
    signal,
  });
}

/**
 * Creates `object`; undefined when something already has its name (nothing is changed). The apiserver's
 * quota admission runs before its name check (kubernetes/kubernetes#106842): a create refused for quota is
 * read after, and a name taken is taken. Without it, a move retried after its copy was made (a 409 on the
 * copy's status, a crash) asked for share the copy already holds, and at a quota's limit waited for it
 * forever.
 */
function createIfAbsent(
  client: CellClient,
  ref: CellularObjectRef,
  object: KubeObject,
  signal: AbortSignal,
): Promise<KubeObject | undefined> {
  return create(client, ref, object, signal).catch(async (error: unknown) => {
    if (isAlreadyExists(error)) return undefined;
    if (quotaRefusalIn(error) && (await read(client, ref, signal)) !== undefined) return undefined;
    throw error;
  });
}

/**
 * The commit itself (see `commitCopy`): `copied-from` removed, the old copy's field managers set, and what the
 * copy was created without (a Job's `suspend`, see `heldUntilCommit`) set back.
 */
/**
 * What keeps the generation clients see of an object unchanged by a write of cellfed's marks to it: a
 * Deployment's apiserver counts the write's annotation change as a new generation, so the same write
 * records the generation clients knew beside the one it makes (ORIGIN_GENERATION_ANNOTATION).
 */
function generationKept(ref: CellularObjectRef, metadata: Readonly<ObjectMeta>): Record<string, string> {
  const { generation, annotations } = metadata;
  if (
    generation === undefined ||
    !showsOriginGeneration(ref.resource) ||
    !annotationsBumpGeneration(ref.resource)
  )
    return {};
  return { [ORIGIN_GENERATION_ANNOTATION]: `${shownGeneration(generation, annotations)}:${generation + 1}` };
}

async function commitNewCopy(
  cell: CellEnd,
  ref: CellularObjectRef,
  signal: AbortSignal,
  old: ObjectMeta | undefined,
  known?: ObjectMeta,
): Promise<void> {
  await commitCopy({
    client: cell.client,
    path: objectPath(ref),
    mark: COPIED_FROM_ANNOTATION,
    heldSpec: HELD_SPEC_ANNOTATION,
    ...(old?.managedFields ? { managedFields: old.managedFields } : {}),
    ...(old?.generation === undefined || !showsOriginGeneration(ref.resource)
      ? {}
      : { shownGeneration: shownGeneration(old.generation, old.annotations) }),
    // As written by the move (a client's write may reach it after the handover, before this commit).
    ...(known?.generation === undefined ? {} : { madeAtGeneration: known.generation }),
    annotationsBumpGeneration: annotationsBumpGeneration(ref.resource),
    ...(known ? { known } : {}),
    fieldManager: FIELD_MANAGER,
    signal,
  });
}

function patch(
  client: CellClient,
  ref: CellularObjectRef,
  signal: AbortSignal,
  body: unknown,
): Promise<KubeObject> {
  return client.request<KubeObject>('PATCH', objectPath(ref), {
    body,
    contentType: MERGE_PATCH,
    query: { fieldManager: FIELD_MANAGER },
    signal,
  });
}
