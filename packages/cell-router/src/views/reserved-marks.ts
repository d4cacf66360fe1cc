import { SHARD_BY_LABEL } from '@cellfed/api';

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

export type MarkMap = 'labels' | 'annotations';

/** One reserved mark a write names: its value, or null where the write removes it. */
export interface MarkWrite {
  readonly map: MarkMap;
  readonly key: string;
  readonly value: unknown;
}

const MAPS: readonly MarkMap[] = ['labels', 'annotations'];

/** The reserved marks a parsed write body names, by its shape. */
export function markWrites(shape: WriteShape, body: unknown): MarkWrite[] {
  if (shape === 'json-patch') return Array.isArray(body) ? body.flatMap(jsonPatchMarks) : [];
  return marksOfObject(body);
}

/**
 * The writes the router refuses: every reserved mark a create or patch names; of an update (a whole object,
 * `PUT`), those whose value differs from the stored one. An update's kept annotations are the stored ones
 * whatever it sends (views/write-views.ts), so they are never refused.
 */
export function refusedMarks(writes: readonly MarkWrite[], update: StoredMarks | undefined): MarkWrite[] {
  if (!update) return [...writes];
  return writes.filter(
    (write) =>
      !(write.map === 'annotations' && (KEPT_ANNOTATIONS as readonly string[]).includes(write.key)) &&
      update[write.map]?.[write.key] !== write.value,
  );
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
    field: `metadata.${write.map}[${write.key}]`,
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

function marksOfObject(body: unknown): MarkWrite[] {
  const metadata = field(body, 'metadata');
  return MAPS.flatMap((map) => marksIn(map, field(metadata, map)));
}

function marksIn(map: MarkMap, values: unknown): MarkWrite[] {
  if (typeof values !== 'object' || values === null) return [];
  return Object.entries(values)
    .filter(([key]) => isReservedMark(key))
    .map(([key, value]) => ({ map, key, value }));
}

interface JsonPatchOp {
  op?: unknown;
  path?: unknown;
  from?: unknown;
  value?: unknown;
}

/**
 * The reserved marks one JSON patch operation names: by its path or `from` into a labels or annotations map,
 * or in the value it puts at the document, its metadata, or one of the maps. A `test` changes nothing.
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
    if (path === '') marks.push(...marksOfObject(value));
    else if (path === '/metadata') marks.push(...marksOfObject({ metadata: value }));
    else for (const map of MAPS) if (path === `/metadata/${map}`) marks.push(...marksIn(map, value));
  }
  return marks;
}

/** The mark a JSON pointer names (`/metadata/labels/cellfed.io~1x`), if a reserved one. */
function markAt(pointer: string): { map: MarkMap; key: string } | undefined {
  for (const map of MAPS) {
    const prefix = `/metadata/${map}/`;
    if (!pointer.startsWith(prefix)) continue;
    const key = pointer.slice(prefix.length).replaceAll('~1', '/').replaceAll('~0', '~');
    return isReservedMark(key) ? { map, key } : undefined;
  }
  return undefined;
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}
