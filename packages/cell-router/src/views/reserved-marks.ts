import { HELD_OWNERS_ANNOTATION, REBALANCE_STATUS_LABEL, SHARD_BY_LABEL } from '@cellfed/api';
import jsonPatch, { type Operation } from 'fast-json-patch';

import { failure, type KubeStatus } from '../status/kube-status.ts';
import { KEPT_ANNOTATIONS, type StoredMarks } from './cell-owners.ts';
import type { WriteShape } from './cell-view.ts';

/**
 * cellfed's own labels and annotations (`cellfed.io/…`) decide what its controllers do with an object: a
 * follower copy is never moved, backed up or counted in a quota; a `migrated` old copy is deleted; a
 * `copied-from` copy holds a rebalance open; `cellfed.io/uid` is the uid clients are shown. No client writes
 * them: a write through the router that sets, changes or removes one is refused (422), as one apiserver
 * refuses an invalid field, so no caller steers cellfed's controllers (docs/security.md). The one mark
 * clients write is a namespace's `cellfed.io/shard-by` (docs/routing.md).
 */

const PREFIX = 'cellfed.io/';
const CLIENT_MARKS: ReadonlySet<string> = new Set([SHARD_BY_LABEL]);

export function isReservedMark(key: string): boolean {
  return key.startsWith(PREFIX) && !CLIENT_MARKS.has(key);
}

type MarkMap = 'labels' | 'annotations';

/** One reserved mark a write names: where, and its value, or null where the write removes it. */
export interface MarkWrite {
  readonly map: MarkMap;
  readonly key: string;
  readonly value: unknown;
  /** Where its metadata is: `metadata` for the object's own, `spec.template.metadata` for a template's. */
  readonly at: string;
}

const MAPS: readonly MarkMap[] = ['labels', 'annotations'];

/**
 * The reserved marks a parsed write body names, by its shape: in the object's own metadata and in every
 * template's (a pod template's, a StatefulSet's claim templates', an ephemeral volume's), whose objects the
 * cells' controllers make with them.
 */
export function markWrites(shape: WriteShape, body: unknown): MarkWrite[] {
  if (shape === 'json-patch') return Array.isArray(body) ? body.flatMap(jsonPatchMarks) : [];
  return marksWithin(body, '');
}

/**
 * The writes the router refuses: every reserved mark a create or patch names; of an update (a whole object,
 * `PUT`), those of the object's own metadata whose value differs from the stored one, and any in a template.
 * An update's kept annotations are the stored ones whatever it sends (views/write-views.ts), so they are
 * never refused.
 */
export function refusedMarks(writes: readonly MarkWrite[], update: StoredMarks | undefined): MarkWrite[] {
  if (!update) return [...writes];
  return writes.filter(
    (write) =>
      write.at !== 'metadata' ||
      (!(write.map === 'annotations' && (KEPT_ANNOTATIONS as readonly string[]).includes(write.key)) &&
        update[write.map]?.[write.key] !== write.value),
  );
}

/**
 * The stored marks a merge or strategic-merge patch removes without naming them: a labels or annotations
 * map set to null, and a strategic merge patch's `$patch: replace` or `delete` on that map or on the whole
 * metadata (the map is then what the patch lists). Only the object's own metadata: its marks are what
 * cellfed's controllers read.
 */
export function marksRemovedByPatch(
  shape: WriteShape,
  patch: unknown,
  stored: StoredMarks | undefined,
): MarkWrite[] {
  if (!stored) return [];
  const metadata = field(patch, 'metadata');
  return MAPS.flatMap((map) => {
    if (!replacesMap(shape, metadata, map, patch)) return [];
    const patched = field(metadata, map);
    const kept =
      typeof patched === 'object' && patched !== null && directive(patched) !== 'delete' ? patched : {};
    return Object.keys(stored[map] ?? {})
      .filter((key) => isReservedMark(key) && !(key in kept))
      .map((key) => ({ map, key, value: null, at: 'metadata' }));
  });
}

/** Whether a merge or strategic-merge patch may remove stored marks it does not name (see above). */
export function replacesMarkMaps(shape: WriteShape, patch: unknown): boolean {
  const metadata = field(patch, 'metadata');
  return MAPS.some((map) => replacesMap(shape, metadata, map, patch));
}

function replacesMap(shape: WriteShape, metadata: unknown, map: MarkMap, root?: unknown): boolean {
  if (shape !== 'merge-patch' && shape !== 'strategic-merge-patch') return false;
  if (metadata === null) return true;
  const patched = field(metadata, map);
  if (patched === null) return true;
  // A strategic merge patch's directives on the whole object, the metadata or the map replace what they name.
  return (
    shape === 'strategic-merge-patch' &&
    [root, metadata, patched].some(
      (level) => directive(level) !== undefined || field(level, '$retainKeys') !== undefined,
    )
  );
}

/**
 * Whether a write's effect on the marks depends on the object as stored: a JSON patch's `copy` or `move`
 * (from anywhere), and an `add`, `replace` or `remove` of a labels or annotations map or of what holds one
 * (a metadata, a template, the whole object), which replaces the marks in it. (Reading the object costs a
 * GET as the caller, so a patch of a key inside a map, or of a field no metadata is in, is judged as sent.)
 */
export function needsStoredObject(shape: WriteShape, patch: unknown): boolean {
  if (shape !== 'json-patch' || !Array.isArray(patch)) return false;
  return patch.some((operation) => {
    const op = String(field(operation, 'op'));
    if (op === 'copy' || op === 'move') return true;
    const path = field(operation, 'path');
    return op !== 'test' && typeof path === 'string' && holdsMarkMaps(path.split('/').slice(1).map(unescape));
  });
}

/** Where metadata sits in an object: its own, a pod template's, a CronJob's, each claim template's. */
const METADATA_PATHS: readonly (readonly string[])[] = [
  ['metadata'],
  ['spec', 'template', 'metadata'],
  ['spec', 'jobTemplate', 'spec', 'template', 'metadata'],
  ['spec', 'volumeClaimTemplates', '*', 'metadata'],
];

/** Whether a JSON pointer's segments name a labels or annotations map, or something that holds one. */
function holdsMarkMaps(segments: readonly string[]): boolean {
  return METADATA_PATHS.some((metadata) => {
    const maps = [...metadata, '*'];
    if (segments.length > maps.length) return false;
    return segments.every((segment, i) =>
      maps[i] === '*'
        ? i === metadata.length
          ? segment === 'labels' || segment === 'annotations'
          : /^(\d+|-)$/.test(segment)
        : maps[i] === segment,
    );
  });
}

/**
 * The marks an update (a whole object, `PUT`) drops by leaving them out: every reserved label or annotation
 * the object has that the body does not name, but those the router keeps itself (the kept annotations and
 * the held owners, which it writes back or rewrites) and the fence label (a fenced copy takes no write).
 */
export function marksDroppedByUpdate(body: unknown, stored: StoredMarks | undefined): MarkWrite[] {
  if (!stored) return [];
  const metadata = field(body, 'metadata');
  return MAPS.flatMap((map) => {
    const sent = field(metadata, map);
    return Object.keys(stored[map] ?? {})
      .filter((key) => isReservedMark(key) && !ROUTER_KEPT.has(key))
      .filter((key) => typeof sent !== 'object' || sent === null || !(key in sent))
      .map((key) => ({ map, key, value: null, at: 'metadata' }));
  });
}

const ROUTER_KEPT: ReadonlySet<string> = new Set([
  ...KEPT_ANNOTATIONS,
  HELD_OWNERS_ANNOTATION,
  REBALANCE_STATUS_LABEL,
]);

/**
 * The marks a JSON patch sets, changes or removes in any metadata (the object's or a template's) found by
 * applying it to the object as stored: a `copy` or `move` from anywhere (a selector's labels, a custom
 * resource's map) into a labels or annotations map names no mark in its own text; a `remove` of a map
 * drops the marks it holds. A patch that does not apply to the stored object answers `does-not-apply`.
 */
export function marksChangedByJsonPatch(patch: unknown, stored: unknown): MarkWrite[] | 'does-not-apply' {
  if (!Array.isArray(patch) || typeof stored !== 'object' || stored === null) return [];
  let result: unknown;
  try {
    result = jsonPatch.applyPatch(structuredClone(stored), patch as Operation[], true, false).newDocument;
  } catch {
    // Not judged, so not sent: a patch that does not apply here (or names what this check will not walk,
    // such as __proto__) might apply in the cell to a newer object.
    return 'does-not-apply';
  }
  const before = new Map(marksWithin(stored, '').map((mark) => [markId(mark), mark]));
  const after = new Map(marksWithin(result, '').map((mark) => [markId(mark), mark]));
  const changed: MarkWrite[] = [];
  for (const [id, mark] of after) if (before.get(id)?.value !== mark.value) changed.push(mark);
  // What the router manages itself (kept annotations, held owners, the fence label) is its to drop or keep:
  // `kubectl rollout undo` replaces the annotations whole.
  for (const [id, mark] of before)
    if (!after.has(id) && !ROUTER_KEPT.has(mark.key)) changed.push({ ...mark, value: null });
  return changed;
}

const markId = (mark: MarkWrite) => `${mark.at}\u0000${mark.map}\u0000${mark.key}`;

/** A strategic merge patch's `$patch` directive on a map, if any. */
function directive(value: unknown): string | undefined {
  const patch = field(value, '$patch');
  return typeof patch === 'string' ? patch : undefined;
}

/** The Status kube-apiserver's validation would answer, one cause per mark. */
export function reservedMarksStatus(
  kind: string,
  name: string,
  group: string,
  refused: readonly MarkWrite[],
): KubeStatus {
  const causes = refused.map((write) => ({
    reason: 'FieldValueForbidden',
    field: `${write.at}.${write.map}[${write.key}]`,
    message: `Forbidden: the ${PREFIX} prefix is reserved for cellfed`,
  }));
  const errors = causes.map((cause) => `${cause.field}: ${cause.message}`);
  const qualified = group ? `${kind}.${group}` : kind;
  return failure(
    422,
    'Invalid',
    `${qualified} "${name}" is invalid: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`,
    { name, group, kind, causes },
  );
}

/** The marks in every `metadata` within `value` (itself at `path`, a field path ending in `.` or empty). */
function marksWithin(value: unknown, path: string): MarkWrite[] {
  if (Array.isArray(value))
    return value.flatMap((item, index) => marksWithin(item, `${path.slice(0, -1)}[${index}].`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([name, inner]) =>
    name === 'metadata' ? marksOfMetadata(inner, `${path}metadata`) : marksWithin(inner, `${path}${name}.`),
  );
}

function marksOfMetadata(metadata: unknown, at: string): MarkWrite[] {
  return MAPS.flatMap((map) => marksIn(map, field(metadata, map), at));
}

function marksIn(map: MarkMap, values: unknown, at: string): MarkWrite[] {
  if (typeof values !== 'object' || values === null) return [];
  return Object.entries(values)
    .filter(([key]) => isReservedMark(key))
    .map(([key, value]) => ({ map, key, value, at }));
}

interface JsonPatchOp {
  op?: unknown;
  path?: unknown;
  from?: unknown;
  value?: unknown;
}

/**
 * The reserved marks one JSON patch operation names: by its path or `from` into a labels or annotations map
 * (of the object or a template), or within the value it puts. A `test` changes nothing.
 */
function jsonPatchMarks(operation: unknown): MarkWrite[] {
  const { op, path, from, value } = (operation ?? {}) as JsonPatchOp;
  if (op === 'test') return [];
  const marks: MarkWrite[] = [];
  for (const pointer of [path, from]) {
    if (typeof pointer !== 'string') continue;
    const named = markAt(pointer);
    if (named) marks.push({ ...named, value: op === 'remove' || pointer === from ? null : value });
  }
  if ((op === 'add' || op === 'replace') && typeof path === 'string') {
    const segments = path.split('/').slice(1).map(unescape);
    const last = segments.at(-1);
    const parent = segments.at(-2);
    const at = fieldPath(segments.slice(0, -2)) + 'metadata';
    if (parent === 'metadata' && (last === 'labels' || last === 'annotations'))
      marks.push(...marksIn(last, value, at));
    else if (last === 'metadata')
      marks.push(...marksOfMetadata(value, fieldPath(segments.slice(0, -1)) + 'metadata'));
    else marks.push(...marksWithin(value, fieldPath(segments)));
  }
  return marks;
}

/** The mark a JSON pointer names (`/metadata/labels/cellfed.io~1x`, or a template's), if a reserved one. */
function markAt(pointer: string): Omit<MarkWrite, 'value'> | undefined {
  const segments = pointer.split('/').slice(1).map(unescape);
  const [metadata, map, key] = segments.slice(-3);
  if (metadata !== 'metadata' || (map !== 'labels' && map !== 'annotations') || key === undefined)
    return undefined;
  if (!isReservedMark(key)) return undefined;
  return { map, key, at: fieldPath(segments.slice(0, -3)) + 'metadata' };
}

/** JSON pointer segments as a field path prefix: `spec.template.` (array indices as `[0]`). */
function fieldPath(segments: readonly string[]): string {
  return (
    segments
      .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`))
      .join('')
      .replace(/^\./, '') + (segments.length > 0 ? '.' : '')
  );
}

function unescape(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}
