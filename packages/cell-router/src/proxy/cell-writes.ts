import { heldOwnersOrNone, ownerReferencesOf, type KubeClient } from '@cellfed/controller-kit';

import { mediaType } from '../request/object-name.ts';
import { objectPath } from '../request/object-path.ts';
import type { ResourceRequestInfo } from '../request/request-info.ts';
import { badRequest, cellFailure, failure, type KubeStatus } from '../status/kube-status.ts';
import { keptOf, type CellOwners, type CellOwnersReader } from '../views/cell-owners.ts';
import { cellViewOfWrite, writeShape } from '../views/cell-view.ts';
import { cellViewOfProtobuf } from '../views/protobuf-view.ts';
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
): Promise<{ bytes: Buffer } | { status: KubeStatus }> {
  const { client, id } = cell;
  const shape =
    info.subresource === ''
      ? writeShape(method, contentType)
      : info.subresource === 'status' && method === 'PUT'
        ? 'object'
        : undefined;
  if (!shape) return { bytes };
  const path = objectPath(info, info.namespace, info.name);
  const current = cellOwnersReader(client, id, path, impersonation);
  try {
    const written =
      shape === 'object' && mediaType(contentType) === 'application/vnd.kubernetes.protobuf'
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

/** Reads the object's owners in its cell, as the caller (who is writing it, so may read it). */
function cellOwnersReader(
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
    return {
      native: ownerReferencesOf(metadata),
      held: heldOwnersOrNone(annotations),
      resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : undefined,
      hasAnnotations: annotations !== undefined && Object.keys(annotations).length > 0,
      identity: keptOf(annotations),
    };
  };
}
