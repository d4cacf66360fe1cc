import { type KubeClient } from '@cellfed/controller-kit';
import { PROTOBUF, heldOwnersOrNone, ownerReferencesOf } from '@cellfed/federation';

import { mediaType } from '../request/object-name.ts';
import { requestObjectPath } from '../request/object-path.ts';
import type { ResourceRequestInfo } from '../request/request-info.ts';
import { badRequest, cellFailure, failure, type KubeStatus } from '../status/kube-status.ts';
import type { Authorize } from '../auth/request-authorization.ts';
import { keptOf, type CellOwners, type CellOwnersReader } from '../views/cell-owners.ts';
import { cellViewOfWrite, parseBody, writeShape, type WriteShape } from '../views/cell-view.ts';
import { cellViewOfProtobuf, protobufMarkWrites } from '../views/protobuf-view.ts';
import { markWrites, refusedMarks, reservedMarksStatus, type MarkWrite } from '../views/reserved-marks.ts';
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
  const shape = shapeOf(info, method, contentType);
  if (!shape) return { bytes };
  const path = requestObjectPath(info, info.namespace, info.name);
  // Read at most once: the mark check and the cell view may both need the object as stored.
  let read: ReturnType<CellOwnersReader> | undefined;
  const stored = cellOwnersReader(client, id, path, impersonation);
  const current: CellOwnersReader = () => (read ??= stored());
  try {
    const refused = await reservedMarksRefusal(info, shape, method, contentType, bytes, current, authorize);
    if (refused) return { status: refused };
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
 * or undefined. A caller not allowed the write gets kube-apiserver's 403 first, as authorization comes
 * before validation. An update is compared with the object as its cell stores it (read as the caller).
 */
export async function reservedMarksRefusal(
  info: ResourceRequestInfo,
  shape: WriteShape,
  method: string | undefined,
  contentType: string | undefined,
  bytes: Buffer,
  current: CellOwnersReader,
  authorize: Authorize,
): Promise<KubeStatus | undefined> {
  if (!bytes.includes(MARK_PREFIX)) return undefined;
  const writes: MarkWrite[] =
    mediaType(contentType) === PROTOBUF
      ? protobufMarkWrites(bytes)
      : markWrites(shape, parseBody(bytes, contentType));
  if (writes.length === 0) return undefined;
  const update = shape === 'object' && method === 'PUT' ? ((await current())?.marks ?? {}) : undefined;
  const refused = refusedMarks(writes, update);
  if (refused.length === 0) return undefined;
  const denied = await authorize();
  if (denied) return denied.status;
  const { kind, name } = namedIn(bytes, contentType);
  return reservedMarksStatus(kind ?? info.resource, name ?? info.name, info.apiGroup, refused);
}

/** How a write to an object changes it: the object's own writes, and an update of its `/status`. */
export function shapeOf(
  info: ResourceRequestInfo,
  method: string | undefined,
  contentType: string | undefined,
): WriteShape | undefined {
  if (info.subresource === '') return writeShape(method, contentType);
  return info.subresource === 'status' && method === 'PUT' ? 'object' : undefined;
}

const MARK_PREFIX = Buffer.from('cellfed.io/');

/** The kind and name a JSON body states, for a Status naming them as kube-apiserver's would. */
function namedIn(bytes: Buffer, contentType: string | undefined): { kind?: string; name?: string } {
  const body = parseBody(bytes, contentType) as { kind?: unknown; metadata?: { name?: unknown } } | undefined;
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
    const metadata = (JSON.parse(text) as { metadata?: Record<string, unknown> }).metadata ?? {};
    const annotations = metadata.annotations as Record<string, string> | undefined;
    const labels = metadata.labels as Record<string, string> | undefined;
    return {
      marks: { labels, annotations },
      native: ownerReferencesOf(metadata),
      held: heldOwnersOrNone(annotations),
      resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : undefined,
      hasAnnotations: annotations !== undefined && Object.keys(annotations).length > 0,
      identity: keptOf(annotations),
    };
  };
}
