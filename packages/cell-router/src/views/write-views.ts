import { HELD_OWNERS_ANNOTATION, ORIGIN_UID_ANNOTATION } from '@cellfed/api';
import jsonPatch, { type Operation } from 'fast-json-patch';
import {
  formatHeldOwners,
  type OwnerReference,
  ownerReferencesOf,
  shownOwners,
  splitOwners,
  without,
} from '@cellfed/federation';

import { CellViewError } from '../errors.ts';
import { KEPT_ANNOTATIONS, type CellOwners, type CellOwnersReader } from './cell-owners.ts';
import { mergeOwnerList, type OwnerListPatch } from './owner-list-merge.ts';

/*
 * The cell view of each shape of write body (see cell-view.ts): a whole object, an apply, and the three
 * kinds of patch. Each answers the body the cell takes, or undefined when it is the client's as it is.
 */

const OWNERS_POINTER = '/metadata/ownerReferences';
export const ANNOTATIONS_POINTER = '/metadata/annotations';

type Metadata = Record<string, unknown> & { annotations?: Record<string, string | null> | null };

/**
 * A JSON patch that replaces or removes `metadata.annotations` whole (kubectl rollout undo writes back the
 * annotations it read) would take a copy's identity with it, since clients never see it: it is kept.
 * The same patch when there is nothing to keep.
 */
export async function keepIdentityInJsonPatch(patch: unknown, current: CellOwnersReader): Promise<unknown> {
  if (!Array.isArray(patch)) return patch;
  const operations = patch as Operation[];
  const whole = (op: Operation) =>
    op.path === ANNOTATIONS_POINTER && (op.op === 'replace' || op.op === 'add' || op.op === 'remove');
  if (!operations.some(whole)) return patch;
  const identity = (await current())?.identity ?? {};
  const sends = (op: Operation) =>
    KEPT_ANNOTATIONS.some((key) => key in (((op as { value?: object }).value ?? {}) as object));
  if (Object.keys(identity).length === 0 && !operations.some((op) => whole(op) && sends(op))) return patch;
  return operations.map((op) => {
    if (!whole(op)) return op;
    const value = op.op === 'remove' ? {} : ((op as { value?: unknown }).value ?? {});
    return {
      op: op.op === 'remove' ? 'replace' : op.op,
      path: ANNOTATIONS_POINTER,
      value: { ...without(value as Record<string, string>, [...KEPT_ANNOTATIONS]), ...identity },
    };
  });
}

function metadataOf(value: unknown): Metadata | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const metadata = (value as { metadata?: unknown }).metadata;
  return typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)
    ? (metadata as Metadata)
    : undefined;
}

/**
 * A whole object (create, update): what it lists is the whole truth. Read through the router, a copy shows
 * the uid clients know (views/client-view.ts) without the annotations that keep it; an update gets them
 * back from the copy, and goes without the uid it was shown, which is not the copy's in its cell and would
 * fail the cell's uid check (the resourceVersion still guards the update).
 */
export async function objectView(object: unknown, reader: CellOwnersReader | undefined): Promise<unknown> {
  const metadata = metadataOf(object);
  if (!metadata) return undefined;
  let read: Promise<CellOwners | undefined> | undefined;
  const current = reader ? () => (read ??= reader()) : undefined;
  const identity = current ? ((await current())?.identity ?? {}) : {};
  const sent = KEPT_ANNOTATIONS.some((key) => metadata.annotations?.[key] !== undefined);
  const copy = Object.keys(identity).length > 0 || (current !== undefined && sent);
  if (copy) {
    if (metadata.uid === identity[ORIGIN_UID_ANNOTATION]) delete metadata.uid;
    metadata.annotations = { ...without(metadata.annotations ?? {}, [...KEPT_ANNOTATIONS]), ...identity };
  }
  if (!('ownerReferences' in metadata)) return copy ? object : undefined;
  const wanted = wantedOwners(metadata.ownerReferences);
  const native = current ? ((await current())?.native ?? []) : [];
  const split = splitOwners(wanted, native);
  setNative(metadata, split.native, 'omit');
  setHeld(metadata, split.held, 'omit');
  return object;
}

/** Server-side apply: every reference the manager applies is held (the annotation is then its field). */
export function applyView(object: unknown): unknown {
  const metadata = metadataOf(object);
  if (!metadata || !('ownerReferences' in metadata)) return undefined;
  const wanted = wantedOwners(metadata.ownerReferences);
  delete metadata.ownerReferences;
  if (wanted.length > 0) setHeld(metadata, wanted, 'omit');
  return object;
}

/** A JSON merge patch replaces the list whole (RFC 7386), or removes it with null. */
export async function mergePatchView(patch: unknown, current: CellOwnersReader): Promise<unknown> {
  const metadata = metadataOf(patch);
  if (!metadata || !('ownerReferences' in metadata)) return undefined;
  const wanted = metadata.ownerReferences === null ? [] : wantedOwners(metadata.ownerReferences);
  const native = wanted.length > 0 ? ((await current())?.native ?? []) : [];
  const split = splitOwners(wanted, native);
  setNative(metadata, split.native, 'null');
  setHeld(metadata, split.held, 'null');
  return patch;
}

/**
 * A strategic merge patch merges the list by uid, with directives: merged here against the list the client
 * sees, then written as the whole native list and the whole held one, at the version it was merged against
 * (a concurrent change makes the write conflict, and the client retries as for any conflict).
 */
export async function strategicPatchView(patch: unknown, current: CellOwnersReader): Promise<unknown> {
  const metadata = metadataOf(patch);
  const order = '$setElementOrder/ownerReferences';
  if (!metadata || !('ownerReferences' in metadata || order in metadata)) return undefined;
  const now = await current();
  if (!now) return undefined;
  const merged = mergeOwnerList(shownOwners(now.native, now.held), {
    ...('ownerReferences' in metadata ? { list: metadata.ownerReferences as OwnerListPatch['list'] } : {}),
    ...(order in metadata ? { order: metadata[order] as OwnerListPatch['order'] } : {}),
  });
  Reflect.deleteProperty(metadata, order);
  const split = splitOwners(wantedOwners(merged), now.native);
  metadata.ownerReferences = split.native.length > 0 ? [...split.native, { $patch: 'replace' }] : null;
  setHeld(metadata, split.held, 'null');
  metadata.resourceVersion ??= now.resourceVersion;
  return patch;
}

/**
 * A JSON patch's operations on the owner list run here against the list the client sees; the patch the cell
 * gets tests the version they ran against, then carries the client's other operations and sets both lists.
 */
export async function jsonPatchView(patch: unknown, current: CellOwnersReader): Promise<unknown> {
  if (!Array.isArray(patch)) return undefined;
  const touches = (op: Operation) =>
    [op.path, (op as { from?: string }).from].some(
      (path) => path === OWNERS_POINTER || path?.startsWith(`${OWNERS_POINTER}/`),
    );
  const operations = patch as Operation[];
  if (!operations.some(touches)) return undefined;
  const now = await current();
  if (!now) return undefined;
  const document = { metadata: { ownerReferences: shownOwners(now.native, now.held) } };
  let result: { metadata: { ownerReferences?: unknown } };
  try {
    result = jsonPatch.applyPatch(document, operations.filter(touches), true, false).newDocument;
  } catch (error) {
    throw new CellViewError(`the JSON patch does not apply to metadata.ownerReferences: ${String(error)}`);
  }
  const split = splitOwners(wantedOwners(result.metadata.ownerReferences ?? []), now.native);
  const held = `/metadata/annotations/${HELD_OWNERS_ANNOTATION.replace('/', '~1')}`;
  return [
    ...(now.resourceVersion
      ? [{ op: 'test', path: '/metadata/resourceVersion', value: now.resourceVersion }]
      : []),
    ...operations.filter((op) => !touches(op)),
    split.native.length > 0
      ? { op: 'add', path: OWNERS_POINTER, value: split.native }
      : now.native.length > 0
        ? { op: 'remove', path: OWNERS_POINTER }
        : undefined,
    split.held.length > 0
      ? now.hasAnnotations
        ? { op: 'add', path: held, value: formatHeldOwners(split.held) }
        : {
            op: 'add',
            path: '/metadata/annotations',
            value: { [HELD_OWNERS_ANNOTATION]: formatHeldOwners(split.held) },
          }
      : now.held.length > 0
        ? { op: 'remove', path: held }
        : undefined,
  ].filter((op) => op !== undefined);
}

function wantedOwners(value: unknown): OwnerReference[] {
  if (value === null || value === undefined) return [];
  const owners = ownerReferencesOf({ ownerReferences: value });
  if (!Array.isArray(value) || owners.length !== value.length)
    throw new CellViewError(
      'metadata.ownerReferences: each owner reference needs apiVersion, kind, name and uid',
    );
  return owners;
}

/** Sets the native list; an empty one is left out of a whole object, or removed by a merge patch (null). */
function setNative(metadata: Metadata, owners: OwnerReference[], empty: 'omit' | 'null'): void {
  if (owners.length > 0) metadata.ownerReferences = owners;
  else if (empty === 'null') metadata.ownerReferences = null;
  else delete metadata.ownerReferences;
}

function setHeld(metadata: Metadata, owners: OwnerReference[], empty: 'omit' | 'null'): void {
  const annotations = (metadata.annotations ??= {});
  if (owners.length > 0) annotations[HELD_OWNERS_ANNOTATION] = formatHeldOwners(owners);
  else if (empty === 'null') annotations[HELD_OWNERS_ANNOTATION] = null;
  else {
    const rest = without(annotations, [HELD_OWNERS_ANNOTATION]);
    if (Object.keys(rest).length > 0) metadata.annotations = rest;
    else delete metadata.annotations;
  }
}
