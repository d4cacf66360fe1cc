import { type KubeClient } from '@cellfed/controller-kit';
import { PROTOBUF, heldOwnersOrNone, ownerReferencesOf } from '@cellfed/federation';

import { mediaType } from '../request/object-name.ts';
import { requestObjectPath } from '../request/object-path.ts';
import type { ResourceRequestInfo } from '../request/request-info.ts';
import { badRequest, cellFailure, failure, type KubeStatus } from '../status/kube-status.ts';
import type { Authorize } from '../auth/request-authorization.ts';
import { keptOf, type CellOwners, type CellOwnersReader } from '../views/cell-owners.ts';
import { cellViewOfWrite, writeShape, type WriteShape } from '../views/cell-view.ts';
import { cellViewOfProtobuf, protobufMarkWrites } from '../views/protobuf-view.ts';
import {
  marksChangedByJsonPatch,
  marksDroppedByUpdate,
  marksRemovedByPatch,
  markWrites,
  needsStoredObject,
  refusedMarks,
  replacesMarkMaps,
  reservedMarksStatus,
  type MarkWrite,
} from '../views/reserved-marks.ts';
import { keepIdentityInJsonPatch } from '../views/write-views.ts';
import { decodeWriteBody } from '../views/write-body.ts';
import { ProtobufWireError, CellViewError } from '../errors.ts';

/** The cell could not be asked for the object's current owners: its answer goes to the caller. */
class CellOwnersUnreadable extends Error {
  override readonly name = 'CellOwnersUnreadable';
  readonly status: KubeStatus;

  constructor(status: KubeStatus) {
    super(status.message);
    this.status = status;
  }
}

/**
 * The body of a write to one cellular object as its cell takes it (views/cell-view.ts), or the Status that
 * answers the write instead. Writes to the object itself carry metadata the cell keeps; so does an update of
 * `/status` (some kinds' status updates keep the annotations sent), and it must go without the uid a copy is
 * shown by, which the cell would refuse (409) every time a controller updates the status of a moved object.
 */
export async function cellWriteBody(
  info: ResourceRequestInfo,
  method: string | undefined,
  contentType: string | undefined,
  bytes: Buffer,
  cell: { readonly id: string; readonly client: KubeClient },
  impersonation: Record<string, string | string[]>,
  authorize: Authorize,
): Promise<{ bytes: Buffer } | { status: KubeStatus }> {
  const { client, id } = cell;
  const markShape = markShapeOf(method, contentType);
  if (!markShape) return { bytes };
  const path = requestObjectPath(info, info.namespace, info.name);
  // Read at most once: the mark check and the cell view may both need the object as stored.
  let read: ReturnType<CellOwnersReader> | undefined;
  const stored = cellOwnersReader(client, id, path, impersonation);
  const current: CellOwnersReader = () => (read ??= stored());
  try {
    const refused = await reservedMarksRefusal(
      info,
      markShape,
      method,
      contentType,
      bytes,
      current,
      authorize,
    );
    if (refused) return { status: refused };
    const shape = shapeOf(info, method, contentType);
    if (!shape) return { bytes };
    const written =
      shape === 'object' && mediaType(contentType) === PROTOBUF
        ? await cellViewOfProtobuf(method, bytes, current)
        : await cellViewOfWrite(shape, method, contentType, bytes, current);
    return { bytes: written?.body ?? bytes };
  } catch (error) {
    if (error instanceof CellViewError) return { status: failure(422, 'Invalid', error.message) };
    if (error instanceof ProtobufWireError) return { status: badRequest(error.message) };
    if (error instanceof CellOwnersUnreadable) return { status: error.status };
    throw error;
  }
}

/**
 * The Status that refuses a write setting, changing or removing cellfed's own marks (views/reserved-marks.ts),
 * or undefined. What is judged is what the write means, never its bytes: the body is decoded as the apiserver
 * will decode it (JSON escapes, YAML, protobuf, each kind of patch, JSON pointers' `~1`), and a write whose
 * effect depends on the object as stored (a JSON patch's copy or move, a map a patch replaces) is judged
 * against the object as its cell stores it (read as the caller). A body the router cannot decode is refused:
 * what cannot be read cannot be checked. A caller not allowed the write gets kube-apiserver's 403 first, as
 * authorization comes before validation. Every cell also refuses such writes where they land
 * (@cellfed/federation's marks policy); this check answers first, with the field's name, and covers templates.
 */
export async function reservedMarksRefusal(
  info: ResourceRequestInfo,
  shape: MarkShape,
  method: string | undefined,
  contentType: string | undefined,
  bytes: Buffer,
  current: CellOwnersReader,
  authorize: Authorize,
): Promise<KubeStatus | undefined> {
  if (shape === 'unsupported') return unsupportedMediaType(info, contentType);
  let writes: MarkWrite[];
  let body: unknown;
  if (mediaType(contentType) === PROTOBUF) {
    // Protobuf strings are their bytes: a body without the prefix names no mark. One that has it anywhere
    // but the object's own labels and annotations (a template's, a second metadata field) is not judged.
    const found = countOf(bytes, MARK_PREFIX);
    writes = found > 0 ? protobufMarkWrites(bytes) : [];
    if (found > writes.length) return protobufMarksRefusal();
  } else {
    const decoded = decodeWriteBody(bytes, contentType);
    if ('refused' in decoded) return undecodable(contentType, decoded.refused);
    body = decoded.value;
    writes = markWrites(shape, body);
  }
  const replaces = shape === 'merge-patch' || shape === 'strategic-merge-patch';
  const jsonPatchOnStored = needsStoredObject(shape, body);
  let stored: CellOwners | undefined;
  try {
    if (
      (shape === 'object' && method === 'PUT') ||
      (replaces && replacesMarkMaps(shape, body)) ||
      jsonPatchOnStored
    )
      stored = await current();
  } catch (error) {
    // The cell would not show the caller its object: its answer is the caller's.
    if (error instanceof CellOwnersUnreadable) return error.status;
    throw error;
  }
  if (stored && replaces) writes.push(...marksRemovedByPatch(shape, body, stored.marks));
  if (stored && jsonPatchOnStored) {
    const changed = marksChangedByJsonPatch(await keepIdentityInJsonPatch(body, current), stored.object);
    if (changed === 'does-not-apply') return jsonPatchRefusal(info);
    writes.push(...changed);
  }
  const update = shape === 'object' && method === 'PUT' ? (stored?.marks ?? {}) : undefined;
  if (update && body !== undefined) writes.push(...marksDroppedByUpdate(body, stored?.marks));
  const refused = refusedMarks(writes, update);
  if (refused.length === 0) return undefined;
  const denied = await authorize();
  if (denied) return denied.status;
  const { kind, name } = namedIn(body);
  return reservedMarksStatus(kind ?? info.resource, name ?? info.name, info.apiGroup, refused);
}

/**
 * How a write may change an object's marks: any write with a body, to the object or any of its subresources
 * (a `/status` write changes some kinds' metadata; a Binding's annotations go onto its Pod). `unsupported`:
 * a patch of a type the router cannot decode.
 */
export type MarkShape = WriteShape | 'unsupported';

export function markShapeOf(
  method: string | undefined,
  contentType: string | undefined,
): MarkShape | undefined {
  if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH') return undefined;
  return writeShape(method, contentType) ?? 'unsupported';
}

/** How a write to an object changes it: the object's own writes, and an update of its `/status`. */
function shapeOf(
  info: ResourceRequestInfo,
  method: string | undefined,
  contentType: string | undefined,
): WriteShape | undefined {
  if (info.subresource === '') return writeShape(method, contentType);
  return info.subresource === 'status' && method === 'PUT' ? 'object' : undefined;
}

const MARK_PREFIX = Buffer.from('cellfed.io/');

/** kube-apiserver's 415 for a body in a media type it does not take; here, one the router cannot read. */
function unsupportedMediaType(info: ResourceRequestInfo, contentType: string | undefined): KubeStatus {
  return failure(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format ${JSON.stringify(mediaType(contentType))} - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (a write to ${info.resource})`,
  );
}

function undecodable(contentType: string | undefined, why: string): KubeStatus {
  const type = mediaType(contentType);
  if (type !== 'application/json' && !type.includes('yaml') && !type.endsWith('+json'))
    return failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format ${JSON.stringify(type)} - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf`,
    );
  return badRequest(why);
}

function protobufMarksRefusal(): KubeStatus {
  return badRequest(
    'the protobuf body names the cellfed.io/ prefix outside the object’s own labels and annotations (a template’s, or a second metadata): the prefix is reserved for cellfed; send the object as JSON to be told which field',
  );
}

/** kube-apiserver's words for a JSON patch that does not apply (here: to the object as its cell stores it). */
function jsonPatchRefusal(info: ResourceRequestInfo): KubeStatus {
  return failure(
    422,
    'Invalid',
    `the server rejected our request due to an error in our request: the JSON patch does not apply to ${info.resource} "${info.name}" as it is stored`,
  );
}

/** How many times `needle` occurs in `bytes`. */
function countOf(bytes: Buffer, needle: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + 1)) count++;
  return count;
}

/** The kind and name a decoded body states, for a Status naming them as kube-apiserver's would. */
function namedIn(decoded: unknown): { kind?: string; name?: string } {
  const body = decoded as { kind?: unknown; metadata?: { name?: unknown } } | null | undefined;
  return {
    ...(typeof body?.kind === 'string' ? { kind: body.kind } : {}),
    ...(typeof body?.metadata?.name === 'string' ? { name: body.metadata.name } : {}),
  };
}

/** Reads the object's owners in its cell, as the caller (who is writing it, so may read it). */
export function cellOwnersReader(
  client: KubeClient,
  cell: string,
  path: string,
  impersonation: Record<string, string | string[]>,
): CellOwnersReader {
  return async (): Promise<CellOwners | undefined> => {
    const answer = await client.raw('GET', path, {
      headers: { ...impersonation, accept: 'application/json' },
    });
    const text = await answer.body.text();
    if (answer.statusCode === 404) return undefined;
    if (answer.statusCode !== 200) throw new CellOwnersUnreadable(cellFailure(cell, answer.statusCode, text));
    const object = JSON.parse(text) as { metadata?: Record<string, unknown> };
    const metadata = object.metadata ?? {};
    const annotations = metadata.annotations as Record<string, string> | undefined;
    const labels = metadata.labels as Record<string, string> | undefined;
    return {
      marks: { labels, annotations },
      object,
      native: ownerReferencesOf(metadata),
      held: heldOwnersOrNone(annotations),
      resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : undefined,
      hasAnnotations: annotations !== undefined && Object.keys(annotations).length > 0,
      identity: keptOf(annotations),
    };
  };
}
