import {
  HELD_OWNERS_ANNOTATION,
  ORIGIN_CREATED_ANNOTATION,
  ORIGIN_GENERATION_ANNOTATION,
  ORIGIN_UID_ANNOTATION,
  shownGeneration,
} from '@cellfed/api';
import { REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import {
  formatHeldOwners,
  heldOwners,
  HeldOwnersError,
  type OwnerReference,
  shownOwners,
  splitOwners,
} from '@cellfed/federation';

import {
  fieldSpans,
  lastSpan,
  lengthDelimited,
  replaceSpan,
  stringField,
  varintAt,
  varintField,
  type AnyFieldSpan,
} from '../request/protobuf-wire.ts';
import {
  K8S_MAGIC,
  mapEntryField,
  openEnvelope,
  readMapEntry,
  type Opened,
} from '../request/kube-protobuf.ts';
import { KEPT_ANNOTATIONS, type CellOwnersReader, type CellWrite } from './cell-owners.ts';
import { observedAs } from './client-view.ts';
import { isReservedMark, type MarkWrite } from './reserved-marks.ts';

/**
 * The client and cell views (see client-view.ts, cell-view.ts) of a single object in Kubernetes' protobuf
 * encoding, edited on the wire: the `k8s\0` envelope's `raw` (2) is the object, whose `metadata` is field 1
 * in every built-in kind; ObjectMeta's uid is field 5, generation 7, creationTimestamp 8 (seconds 1, nanos
 * 2), labels map entries in field 11, annotations field 12, owner references field 13.
 */

const METADATA = 1;
const UID = 5;
const GENERATION = 7;
const CREATION_TIMESTAMP = 8;
/** The envelope's TypeMeta (field 1): kind is its field 2. */
const TYPE_META = 1;
const KIND = 2;
/** The object's status (field 3), and where each kind with one keeps `observedGeneration` in it. */
const STATUS = 3;
const OBSERVED_GENERATION: Readonly<Record<string, number>> = { Deployment: 1, StatefulSet: 1, DaemonSet: 5 };
const LABELS = 11;
const ANNOTATIONS = 12;
const OWNER_REFERENCES = 13;
const HELD_KEY = Buffer.from(HELD_OWNERS_ANNOTATION);
const ORIGIN_UID_KEY = Buffer.from(ORIGIN_UID_ANNOTATION);
const ORIGIN_CREATED_KEY = Buffer.from(ORIGIN_CREATED_ANNOTATION);
const ORIGIN_GENERATION_KEY = Buffer.from(ORIGIN_GENERATION_ANNOTATION);
const KEPT_KEYS = KEPT_ANNOTATIONS.map((key) => Buffer.from(key));
const FENCE_KEY = Buffer.from(REBALANCE_STATUS_LABEL);

/** What the protobuf client view is of: copies (the default), or what cells' controllers make. */
export interface ProtobufViewOptions {
  /** Whether the object may be a copy, shown by the identity clients know (see client-view.ts). */
  readonly copies?: boolean;
}

/**
 * The client view of a protobuf object: held owner references shown, a copy's uid, creation time and
 * generation as clients know them, and no move's fence label (as in JSON: client-view.ts). The same bytes
 * when there is nothing to show or it cannot be read.
 */
export function showProtobuf(body: Buffer, options: ProtobufViewOptions = {}): Buffer {
  if (!mayNeedShowing(body)) return body;
  const envelope = openEnvelope(body);
  if (!envelope) return body;
  const typeMeta = lastSpan(body.subarray(K8S_MAGIC.length), TYPE_META);
  const kind = typeMeta
    ? stringField(body.subarray(K8S_MAGIC.length).subarray(typeMeta.start, typeMeta.end), KIND)
    : undefined;
  const shown = showObjectMessage(envelope.inner, { ...options, ...(kind ? { kind } : {}) });
  return shown === envelope.inner ? body : envelope.with(shown);
}

/** {@link showProtobuf} of an object without its envelope (a list's item, of the list's `kind`). */
export function showProtobufMessage(
  object: Buffer,
  options: ProtobufViewOptions & { kind?: string } = {},
): Buffer {
  return mayNeedShowing(object) ? showObjectMessage(object, options) : object;
}

/** Whether an object's bytes hold anything the client view changes (a byte search: most hold nothing). */
function mayNeedShowing(bytes: Buffer): boolean {
  return (
    bytes.includes(HELD_KEY) || bytes.includes(FENCE_KEY) || KEPT_KEYS.some((key) => bytes.includes(key))
  );
}

function showObjectMessage(raw: Buffer, options: ProtobufViewOptions & { kind?: string }): Buffer {
  const object = openMeta(raw);
  if (!object) return raw;
  const meta = object.inner;
  const spans = fieldSpans(meta);
  const copies = options.copies !== false;
  const uid = copies ? annotationIn(meta, spans, ORIGIN_UID_KEY)?.value : undefined;
  const createdAt = copies ? Date.parse(annotationIn(meta, spans, ORIGIN_CREATED_KEY)?.value ?? '') : NaN;
  const origin = copies ? annotationIn(meta, spans, ORIGIN_GENERATION_KEY)?.value : undefined;
  const generationSpan = spans.findLast((span) => span.number === GENERATION && span.wireType === 0);
  const stored = generationSpan ? varintAt(meta, generationSpan.start) : undefined;
  const offset =
    origin === undefined || stored === undefined
      ? 0
      : shownGeneration(stored, { [ORIGIN_GENERATION_ANNOTATION]: origin }) - stored;
  const annotation = annotationIn(meta, spans, HELD_KEY);
  let held: OwnerReference[] = [];
  try {
    if (annotation) held = heldOwners({ [HELD_OWNERS_ANNOTATION]: annotation.value });
  } catch (error) {
    if (!(error instanceof HeldOwnersError)) throw error;
  }
  // The annotations that keep a copy's identity and a move's fence label are not shown (as in JSON:
  // client-view.ts).
  const hidden = new Set(
    spans.filter(
      (span) =>
        (span.number === ANNOTATIONS && keptKeyOf(meta, span)) ||
        (span.number === LABELS && isFenceLabel(meta, span)),
    ),
  );
  if (held.length === 0 && uid === undefined && hidden.size === 0) return raw;
  const native = ownersIn(meta, spans);
  const added = shownOwners(native, held).slice(native.length);
  const shown = object.with(
    Buffer.concat([
      ...spans
        .filter((span) => !hidden.has(span))
        .filter((span) => held.length === 0 || span !== annotation?.span)
        .map((span) => {
          if (span.number === UID && uid !== undefined) return lengthDelimited(UID, Buffer.from(uid));
          if (span.number === CREATION_TIMESTAMP && !Number.isNaN(createdAt))
            return lengthDelimited(CREATION_TIMESTAMP, varintField(1, Math.floor(createdAt / 1000)));
          if (span === generationSpan && offset !== 0) return varintField(GENERATION, stored! + offset);
          return meta.subarray(span.tagStart, span.end);
        }),
      ...added.map((owner) => lengthDelimited(OWNER_REFERENCES, encodeOwner(owner))),
    ]),
  );
  const observed = options.kind === undefined ? undefined : OBSERVED_GENERATION[options.kind];
  return offset !== 0 && observed !== undefined
    ? withObservedGeneration(shown, observed, offset, stored! + offset)
    : shown;
}

/** The object with its status's `observedGeneration` (field `number` of status) as clients count it. */
function withObservedGeneration(raw: Buffer, number: number, offset: number, generation: number): Buffer {
  const statusSpan = lastSpan(raw, STATUS);
  if (!statusSpan || statusSpan.wireType !== 2) return raw;
  const status = raw.subarray(statusSpan.start, statusSpan.end);
  const span = fieldSpans(status).findLast((field) => field.number === number && field.wireType === 0);
  if (!span) return raw;
  const moved = replaceSpan(
    status,
    span,
    varintField(number, observedAs(varintAt(status, span.start), offset, generation)),
  );
  return replaceSpan(raw, statusSpan, lengthDelimited(STATUS, moved));
}

/** The cell view of a protobuf create or update; undefined when it carries no owner references. */
export async function cellViewOfProtobuf(
  method: string | undefined,
  body: Buffer,
  current: CellOwnersReader,
): Promise<CellWrite | undefined> {
  const object = openObject(body);
  if (!object) return undefined;
  const spans = fieldSpans(object.meta);
  const wanted = ownersIn(object.meta, spans);
  // An update may be of a copy: it gets back what keeps its identity (see write-views.ts).
  const now = method === 'PUT' ? await current() : undefined;
  const identity = now?.identity ?? {};
  if (wanted.length === 0 && Object.keys(identity).length === 0) return undefined;
  const split = splitOwners(wanted, now?.native ?? []);
  const stale = annotationIn(object.meta, spans, HELD_KEY)?.span;
  const shownUid = (span: AnyFieldSpan) =>
    span.number === UID &&
    object.meta.subarray(span.start, span.end).toString('utf8') === identity[ORIGIN_UID_ANNOTATION];
  const kept = spans.filter(
    (span) =>
      span.number !== OWNER_REFERENCES &&
      span !== stale &&
      !shownUid(span) &&
      !(span.number === ANNOTATIONS && keptKeyOf(object.meta, span) !== undefined),
  );
  const meta = Buffer.concat([
    ...kept.map((span) => object.meta.subarray(span.tagStart, span.end)),
    ...Object.entries(identity).map(([key, value]) => mapEntryField(ANNOTATIONS, key, value)),
    ...split.native.map((owner) => lengthDelimited(OWNER_REFERENCES, encodeOwner(owner))),
    ...(split.held.length > 0
      ? [mapEntryField(ANNOTATIONS, HELD_OWNERS_ANNOTATION, formatHeldOwners(split.held))]
      : []),
  ]);
  return { body: object.withMeta(meta) };
}

/** The reserved marks (views/reserved-marks.ts) in a protobuf object's own labels and annotations. */
export function protobufMarkWrites(body: Buffer): MarkWrite[] {
  const object = openObject(body);
  if (!object) return [];
  const writes: MarkWrite[] = [];
  for (const span of fieldSpans(object.meta)) {
    const map = span.number === LABELS ? 'labels' : span.number === ANNOTATIONS ? 'annotations' : undefined;
    if (!map || span.wireType !== 2) continue;
    const [key, value] = readMapEntry(object.meta.subarray(span.start, span.end)) ?? [];
    if (key !== undefined && isReservedMark(key)) writes.push({ map, key, value, at: 'metadata' });
  }
  return writes;
}

/** An object message's metadata (field 1). */
function openMeta(raw: Buffer): Opened | undefined {
  const metaSpan = lastSpan(raw, METADATA);
  if (!metaSpan || metaSpan.wireType !== 2) return undefined;
  return {
    inner: raw.subarray(metaSpan.start, metaSpan.end),
    with: (meta) => replaceSpan(raw, metaSpan, lengthDelimited(METADATA, meta)),
  };
}

/** The metadata of the object in a body's envelope, and the whole body again with new metadata. */
function openObject(body: Buffer): { meta: Buffer; withMeta(meta: Buffer): Buffer } | undefined {
  const envelope = openEnvelope(body);
  const object = envelope && openMeta(envelope.inner);
  if (!envelope || !object) return undefined;
  return { meta: object.inner, withMeta: (meta) => envelope.with(object.with(meta)) };
}

/** The map entry of annotation `wanted` in ObjectMeta, and its value. */
function annotationIn(meta: Buffer, spans: readonly AnyFieldSpan[], wanted: Buffer) {
  for (const span of spans) {
    if (span.number !== ANNOTATIONS || span.wireType !== 2) continue;
    const entry = meta.subarray(span.start, span.end);
    const fields = fieldSpans(entry);
    const key = fields.findLast((field) => field.number === 1);
    if (!key || !entry.subarray(key.start, key.end).equals(wanted)) continue;
    const value = fields.findLast((field) => field.number === 2);
    return { span, value: value ? entry.subarray(value.start, value.end).toString('utf8') : '' };
  }
  return undefined;
}

/** The key of an annotation entry when it is one cellfed keeps (see cell-owners.ts). */
function keptKeyOf(meta: Buffer, span: AnyFieldSpan): string | undefined {
  const key = readMapEntry(meta.subarray(span.start, span.end))?.[0];
  return key !== undefined && (KEPT_ANNOTATIONS as readonly string[]).includes(key) ? key : undefined;
}

function isFenceLabel(meta: Buffer, span: AnyFieldSpan): boolean {
  return (
    span.wireType === 2 && readMapEntry(meta.subarray(span.start, span.end))?.[0] === REBALANCE_STATUS_LABEL
  );
}

/** metav1.OwnerReference: kind 1, name 3, uid 4, apiVersion 5, controller 6, blockOwnerDeletion 7. */
function ownersIn(meta: Buffer, spans: readonly AnyFieldSpan[]): OwnerReference[] {
  return spans
    .filter((span) => span.number === OWNER_REFERENCES && span.wireType === 2)
    .map((span) => decodeOwner(meta.subarray(span.start, span.end)));
}

function decodeOwner(message: Buffer): OwnerReference {
  const owner: Record<string, unknown> = { apiVersion: '', kind: '', name: '', uid: '' };
  const strings: Record<number, string> = { 1: 'kind', 3: 'name', 4: 'uid', 5: 'apiVersion' };
  const bools: Record<number, string> = { 6: 'controller', 7: 'blockOwnerDeletion' };
  for (const field of fieldSpans(message)) {
    const name = strings[field.number];
    if (name && field.wireType === 2) owner[name] = message.subarray(field.start, field.end).toString('utf8');
    const flag = bools[field.number];
    if (flag && field.wireType === 0) owner[flag] = varintAt(message, field.start) !== 0;
  }
  return owner as OwnerReference;
}

function encodeOwner(owner: OwnerReference): Buffer {
  return Buffer.concat([
    lengthDelimited(1, Buffer.from(owner.kind)),
    lengthDelimited(3, Buffer.from(owner.name)),
    lengthDelimited(4, Buffer.from(owner.uid)),
    lengthDelimited(5, Buffer.from(owner.apiVersion)),
    ...(owner.controller === undefined ? [] : [varintField(6, owner.controller ? 1 : 0)]),
    ...(owner.blockOwnerDeletion === undefined ? [] : [varintField(7, owner.blockOwnerDeletion ? 1 : 0)]),
  ]);
}
