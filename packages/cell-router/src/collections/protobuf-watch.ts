import type { WatchEvent } from '@cellfed/controller-kit';

import { enveloped, readObjectMetaOf } from '../request/kube-protobuf.ts';
import {
  appendToNested,
  lengthDelimited,
  nestedField,
  stringField,
  varintField,
} from '../request/protobuf-wire.ts';
import type { KubeStatus } from '../status/kube-status.ts';
import { showProtobuf, type ProtobufViewOptions } from '../views/protobuf-view.ts';
import { isProtobuf, protobufStatus } from './protobuf-list.ts';
import type { WatchedObject } from './watched-object.ts';

/**
 * Watches in Kubernetes' protobuf encoding, read and written on the wire, for clients that accept nothing
 * else. The stream is frames of a 4-byte big-endian length and a `metav1.WatchEvent` {type 1, object 2:
 * RawExtension {raw 1}}, whose raw is an object in the `k8s\0` envelope (an ERROR's, a Status).
 */

/** A watched object in protobuf: the metadata the merge reads, and its own bytes (in the envelope). */
export interface ProtobufObject extends WatchedObject {
  readonly protobuf: Buffer;
  metadata: NonNullable<WatchedObject['metadata']> & { annotations?: Record<string, string> };
}

export function isProtobufObject(object: unknown): object is ProtobufObject {
  return (
    typeof object === 'object' && object !== null && Buffer.isBuffer((object as ProtobufObject).protobuf)
  );
}

/** An object in the envelope, with the metadata the merge reads: place, version, labels, annotations. */
export function protobufObject(body: Buffer): ProtobufObject {
  const envelope = body.subarray(4);
  const typeMeta = nestedField(envelope, [1]);
  const raw = nestedField(envelope, [2]) ?? Buffer.alloc(0);
  const { creationTimestamp: _created, ...metadata } = readObjectMetaOf(raw, { annotations: true });
  const kind = typeMeta ? stringField(typeMeta, 2) : undefined;
  return { ...(kind ? { kind } : {}), metadata, protobuf: body };
}

/** The events of a cell's protobuf watch; an ERROR's object is its Status, read as JSON's would be. */
export async function* protobufWatchEvents(chunks: AsyncIterable<Buffer>): AsyncGenerator<WatchEvent> {
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of chunks) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const length = pending.readUInt32BE(0);
      if (pending.length < 4 + length) break;
      const frame = pending.subarray(4, 4 + length);
      pending = pending.subarray(4 + length);
      const type = stringField(frame, 1) ?? '';
      const raw = nestedField(frame, [2, 1]) ?? Buffer.alloc(0);
      const object =
        type === 'ERROR' && isProtobuf(raw) ? protobufStatus(raw) : protobufObject(Buffer.from(raw));
      yield { type, object } as WatchEvent;
    }
  }
}

/** One event as the client reads it: a framed WatchEvent. A Status (the router's own ERROR) is encoded. */
export function protobufFrame(event: { type: string; object: unknown }): Buffer {
  const raw = isProtobufObject(event.object)
    ? event.object.protobuf
    : encodeStatus(event.object as KubeStatus);
  const message = Buffer.concat([
    lengthDelimited(1, Buffer.from(event.type)),
    lengthDelimited(2, lengthDelimited(1, raw)),
  ]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(message.length);
  return Buffer.concat([length, message]);
}

/**
 * The object as the client sees it (identity view) with the composite version: ObjectMeta's field 6
 * appended, which decoders take over the cell's (the last occurrence wins).
 */
export function protobufWithVersion(
  object: ProtobufObject,
  resourceVersion: string,
  view: ProtobufViewOptions = {},
): ProtobufObject {
  const shown = showProtobuf(object.protobuf, view);
  const versioned = Buffer.concat([
    shown.subarray(0, 4),
    appendToNested(shown.subarray(4), [2, 1], lengthDelimited(6, Buffer.from(resourceVersion))),
  ]);
  return { ...object, metadata: { ...object.metadata, resourceVersion }, protobuf: versioned };
}

/** A Status in the envelope: status 2, message 3, reason 4, code 6. */
function encodeStatus(status: KubeStatus): Buffer {
  return enveloped(
    'v1',
    'Status',
    Buffer.concat([
      lengthDelimited(1, Buffer.alloc(0)),
      lengthDelimited(2, Buffer.from(status.status ?? 'Failure')),
      lengthDelimited(3, Buffer.from(status.message ?? '')),
      lengthDelimited(4, Buffer.from(status.reason ?? '')),
      varintField(6, status.code ?? 500),
    ]),
  );
}
