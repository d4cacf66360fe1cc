import {
  fieldSpans,
  lastSpan,
  lengthDelimited,
  nestedField,
  replaceSpan,
  stringField,
  varintAt,
} from './protobuf-wire.ts';

/**
 * The shapes of Kubernetes' protobuf encoding that the router reads and writes without the types' schemas:
 * the `k8s\0` envelope (runtime.Unknown {typeMeta 1 {apiVersion 1, kind 2}, raw 2}), map entries
 * ({key 1, value 2}), and ObjectMeta {name 1, namespace 3, resourceVersion 6, creationTimestamp 8
 * {seconds 1}, labels 11, annotations 12, ownerReferences 13 {controller 6}}.
 */

export const K8S_MAGIC = Buffer.from('k8s\0', 'binary');
/** runtime.Unknown's raw object. */
const RAW = 2;

/** Whether a body is in the `k8s\0` envelope. */
export function isEnveloped(body: Buffer): boolean {
  return body.subarray(0, K8S_MAGIC.length).equals(K8S_MAGIC);
}

/** A field of a message opened: its bytes, and the whole message again with other bytes in its place. */
export interface Opened {
  readonly inner: Buffer;
  with(inner: Buffer): Buffer;
}

/** The object in a body's `k8s\0` envelope (its raw, field 2, the last one). */
export function openEnvelope(body: Buffer): Opened | undefined {
  if (!isEnveloped(body)) return undefined;
  const envelope = body.subarray(K8S_MAGIC.length);
  const rawSpan = lastSpan(envelope, RAW);
  if (!rawSpan) return undefined;
  return {
    inner: envelope.subarray(rawSpan.start, rawSpan.end),
    with: (raw) => Buffer.concat([K8S_MAGIC, replaceSpan(envelope, rawSpan, lengthDelimited(RAW, raw))]),
  };
}

/** `raw` (an object or a list message) in the envelope, typed `apiVersion` and `kind`. */
export function enveloped(apiVersion: string, kind: string, raw: Buffer): Buffer {
  const typeMeta = Buffer.concat([
    lengthDelimited(1, Buffer.from(apiVersion)),
    lengthDelimited(2, Buffer.from(kind)),
  ]);
  return Buffer.concat([K8S_MAGIC, lengthDelimited(1, typeMeta), lengthDelimited(2, raw)]);
}

/** A map entry (a label or an annotation) as field `number` of its message. */
export function mapEntryField(number: number, key: string, value: string): Buffer {
  return lengthDelimited(
    number,
    Buffer.concat([lengthDelimited(1, Buffer.from(key)), lengthDelimited(2, Buffer.from(value))]),
  );
}

/** A map entry's key and value; undefined without a key. */
export function readMapEntry(entry: Buffer): [key: string, value: string] | undefined {
  const key = stringField(entry, 1);
  return key === undefined ? undefined : [key, stringField(entry, 2) ?? ''];
}

/** What the router reads of an ObjectMeta. */
export interface ObjectMetaFields {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  /** RFC 3339, seconds precision, as JSON carries it. */
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Of each owner reference, only whether it is the controller (what tells what a cell made). */
  ownerReferences?: { controller: boolean }[];
}

/** The fields of an ObjectMeta message; annotations only when asked for (a list's items need none). */
function readObjectMeta(meta: Buffer, options: { annotations?: boolean } = {}): ObjectMetaFields {
  const found: ObjectMetaFields = {};
  for (const span of fieldSpans(meta)) {
    if (span.wireType !== 2) continue;
    const bytes = meta.subarray(span.start, span.end);
    if (span.number === 1) found.name = bytes.toString('utf8');
    else if (span.number === 3) found.namespace = bytes.toString('utf8');
    else if (span.number === 6) found.resourceVersion = bytes.toString('utf8');
    else if (span.number === 8) found.creationTimestamp = timestamp(bytes);
    else if (span.number === 13) (found.ownerReferences ??= []).push({ controller: isController(bytes) });
    else if (span.number === 11 || (span.number === 12 && options.annotations)) {
      const entry = readMapEntry(bytes);
      if (!entry) continue;
      const map = span.number === 11 ? (found.labels ??= {}) : (found.annotations ??= {});
      map[entry[0]] = entry[1];
    }
  }
  return found;
}

/** An object message's metadata (its field 1), read. */
export function readObjectMetaOf(object: Buffer, options: { annotations?: boolean } = {}): ObjectMetaFields {
  return readObjectMeta(nestedField(object, [1]) ?? Buffer.alloc(0), options);
}

/** OwnerReference's `controller` (field 6, a bool): the last value on the wire wins, as in any decoder. */
function isController(reference: Buffer): boolean {
  const flag = fieldSpans(reference).findLast((span) => span.number === 6 && span.wireType === 0);
  return flag !== undefined && varintAt(reference, flag.start) !== 0;
}

/** metav1.Time {seconds 1, nanos 2} as the RFC 3339 text JSON carries (seconds precision, as kube writes). */
function timestamp(time: Buffer): string | undefined {
  const seconds = fieldSpans(time).findLast((span) => span.number === 1 && span.wireType === 0);
  if (!seconds) return undefined;
  return new Date(varintAt(time, seconds.start) * 1000).toISOString().replace('.000Z', 'Z');
}
