import { enveloped, isEnveloped, readObjectMetaOf } from '../request/kube-protobuf.ts';
import {
  appendToNested,
  fieldSpans,
  lengthDelimited,
  nestedField,
  stringField,
  varintAt,
} from '../request/protobuf-wire.ts';
import { shownVersion } from './source-versions.ts';
import type { ItemMeta } from './item-source.ts';

/**
 * Lists in Kubernetes' protobuf encoding, read and written on the wire without their schemas, for clients
 * that accept nothing else. A list is `k8s\0` + runtime.Unknown {typeMeta (1) {apiVersion 1, kind 2}, raw
 * (2)}, and raw is an `XList` {metadata (1): ListMeta {resourceVersion 2, continue 3, remainingItemCount 4},
 * items (2, repeated)}. Every item's metadata is its field 1, an ObjectMeta {name 1, namespace 3,
 * resourceVersion 6, creationTimestamp 8 {seconds 1}, labels 11 (map entries {key 1, value 2})}.
 */

export interface ProtobufListPage {
  readonly kind: string;
  readonly apiVersion: string;
  readonly resourceVersion: string;
  readonly continue: string | undefined;
  /** Each item as its metadata, in the shape `itemMeta` reads (`{metadata}`). */
  readonly items: { metadata: ItemMeta }[];
  /** Each item's own bytes. */
  readonly raw: Buffer[];
}

/** Whether a body is in the protobuf envelope (a list, or a Status a cell refused with). */
export const isProtobuf = isEnveloped;

/** A cell's protobuf list page. Throws ProtobufWireError on a body that does not parse. */
export function parseProtobufList(body: Buffer): ProtobufListPage {
  const envelope = body.subarray(4);
  const typeMeta = nestedField(envelope, [1]) ?? Buffer.alloc(0);
  const list = nestedField(envelope, [2]) ?? Buffer.alloc(0);
  let listMeta: Buffer = Buffer.alloc(0);
  const raw: Buffer[] = [];
  for (const span of fieldSpans(list)) {
    if (span.wireType !== 2) continue;
    if (span.number === 1) listMeta = list.subarray(span.start, span.end);
    if (span.number === 2) raw.push(list.subarray(span.start, span.end));
  }
  const continueToken = stringField(listMeta, 3);
  return {
    apiVersion: stringField(typeMeta, 1) ?? '',
    kind: stringField(typeMeta, 2) ?? '',
    resourceVersion: stringField(listMeta, 2) ?? '',
    continue: continueToken || undefined,
    items: raw.map((item) => ({ metadata: protobufItemMeta(item) })),
    raw,
  };
}

/** A merged list in the protobuf envelope: the first page's kind, the router's versions and token. */
export function encodeProtobufList(list: {
  kind: string;
  apiVersion: string;
  resourceVersion: string;
  continue?: string | undefined;
  items: readonly Buffer[];
}): Buffer {
  const listMeta = Buffer.concat([
    lengthDelimited(2, Buffer.from(list.resourceVersion)),
    ...(list.continue ? [lengthDelimited(3, Buffer.from(list.continue))] : []),
  ]);
  const body = Buffer.concat([
    lengthDelimited(1, listMeta),
    ...list.items.map((item) => lengthDelimited(2, item)),
  ]);
  return enveloped(list.apiVersion, list.kind, body);
}

/**
 * A protobuf item with its resourceVersion as clients see it (views/shown-version.ts): ObjectMeta's field 6
 * appended, which decoders take over the cell's (the last occurrence wins).
 */
export function withProtobufItemVersion(item: Buffer, cell: string): Buffer {
  const own = nestedField(item, [1, 6])?.toString('utf8');
  const shown = own === undefined ? undefined : shownVersion(cell, own);
  if (shown === undefined) return item;
  return appendToNested(item, [1], lengthDelimited(6, Buffer.from(shown)));
}

/** A Status a cell answered in protobuf (metadata 1, status 2, message 3, reason 4, code 6), read. */
export function protobufStatus(body: Buffer): {
  kind: 'Status';
  apiVersion: 'v1';
  status: string;
  message: string;
  reason: string;
  code?: number;
} {
  const status = nestedField(body.subarray(4), [2]) ?? Buffer.alloc(0);
  const code = fieldSpans(status).findLast((span) => span.number === 6 && span.wireType === 0);
  return {
    kind: 'Status',
    apiVersion: 'v1',
    status: stringField(status, 2) ?? 'Failure',
    message: stringField(status, 3) ?? '',
    reason: stringField(status, 4) ?? '',
    ...(code ? { code: varintAt(status, code.start) } : {}),
  };
}

/** {@link protobufStatus} as JSON text, so it is passed on as any other refusal. */
export function protobufStatusJson(body: Buffer): string {
  return JSON.stringify(protobufStatus(body));
}

/** What the merge reads of an item: its place, labels and creation time. */
function protobufItemMeta(item: Buffer): ItemMeta {
  const { resourceVersion: _resourceVersion, ...meta } = readObjectMetaOf(item);
  return meta;
}
