import { shownVersion } from '../collections/source-versions.ts';
import { appendToNested, lengthDelimited, nestedField } from '../request/protobuf-wire.ts';

const VERSION = Buffer.from('"resourceVersion":"');
const METADATA = Buffer.from('"metadata":{');
const ROW_OBJECT = Buffer.from('"object":{');

/**
 * One object's JSON (or a Table row holding one) with its metadata's resourceVersion as clients see it: the
 * source's own version carried in the one number of that object version (collections/source-versions.ts).
 * Edited in the bytes, where the top-level `metadata` (a row's `object`'s) has it; anything else is left as
 * it is.
 */
export function withShownVersion(json: Buffer | string, source: string): Buffer | string {
  const bytes = typeof json === 'string' ? Buffer.from(json) : json;
  const root = bytes.indexOf(0x7b);
  if (root < 0) return json;
  // A Table row's object (what `kubectl get -o wide` lists) is under `object`.
  const row = bytes.subarray(root, root + 9).toString('latin1') === '{"cells":';
  const object = row ? keyAt(bytes, root + 1, ROW_OBJECT) : root;
  if (object < 0) return json;
  const edited = withVersionIn(bytes, row ? object + ROW_OBJECT.length : object + 1, METADATA, (own) =>
    shownVersion(source, own),
  );
  return edited ?? json;
}

/**
 * The bytes with the `resourceVersion` of the object under `holder` (`"metadata":{`, `"preconditions":{`)
 * among the fields of the object opened before `from` replaced by what `map` makes of it; undefined when
 * there is none or `map` gives nothing.
 */
export function withVersionIn(
  bytes: Buffer,
  from: number,
  holder: Buffer,
  map: (version: string) => string | undefined,
): Buffer | undefined {
  const at = keyAt(bytes, from, holder);
  const start = at < 0 ? -1 : keyAt(bytes, at + holder.length, VERSION);
  if (start < 0) return undefined;
  const valueStart = start + VERSION.length;
  const valueEnd = bytes.indexOf('"', valueStart);
  if (valueEnd < 0) return undefined;
  const mapped = map(bytes.toString('latin1', valueStart, valueEnd));
  if (mapped === undefined) return undefined;
  return Buffer.concat([bytes.subarray(0, valueStart), Buffer.from(mapped), bytes.subarray(valueEnd)]);
}

/**
 * Where `key` (a quoted key and what follows it) starts among the fields of the object opened just before
 * `from`, not inside a nested value (an annotation keyed `resourceVersion`, a custom resource's `data`
 * holding a `metadata`); -1 when the object has none. Strings are skipped with their escapes, so no value is
 * mistaken for a key.
 */
function keyAt(bytes: Buffer, from: number, key: Buffer): number {
  let depth = 0;
  for (let at = from; at < bytes.length; at++) {
    const byte = bytes[at]!;
    if (byte === 0x22) {
      if (depth === 0 && bytes.subarray(at, at + key.length).equals(key)) return at;
      // Skip the string, escapes and all.
      for (at += 1; at < bytes.length && bytes[at] !== 0x22; at++) if (bytes[at] === 0x5c) at += 1;
    } else if (byte === 0x7b || byte === 0x5b) depth += 1;
    else if (byte === 0x7d || byte === 0x5d) {
      if (depth === 0) return -1;
      depth -= 1;
    }
  }
  return -1;
}

/**
 * A single answer's JSON with its version as clients see it: an object, or a Table of one (`kubectl get
 * cm x`), whose own version and each row's object's are its source's.
 */
export function showAnswerVersion(json: Buffer, source: string): Buffer | string {
  const head = json.subarray(0, 64).toString('latin1');
  if (!head.includes('"kind":"Table"')) return withShownVersion(json, source);
  const table = JSON.parse(json.toString('utf8')) as {
    metadata?: { resourceVersion?: string };
    rows?: { object?: { metadata?: { resourceVersion?: string } } }[];
  };
  for (const meta of [table.metadata, ...(table.rows ?? []).map((row) => row.object?.metadata)]) {
    const own = meta?.resourceVersion;
    const shown = own === undefined ? undefined : shownVersion(source, own);
    if (shown !== undefined) meta!.resourceVersion = shown;
  }
  return JSON.stringify(table);
}

/** ObjectMeta.resourceVersion in a protobuf answer's envelope: Unknown.raw (2) → object.metadata (1) → 6. */
const PROTOBUF_VERSION_PATH = [2, 1, 6] as const;

/** A single protobuf answer (`k8s\0` + envelope) with its version as clients see it (appended: the last wins). */
export function showProtobufAnswerVersion(bytes: Buffer, source: string): Buffer {
  const envelope = bytes.subarray(4);
  const own = nestedField(envelope, PROTOBUF_VERSION_PATH)?.toString('utf8');
  const shown = own === undefined ? undefined : shownVersion(source, own);
  if (shown === undefined) return bytes;
  const edited = appendToNested(
    envelope,
    PROTOBUF_VERSION_PATH.slice(0, 2),
    lengthDelimited(6, Buffer.from(shown)),
  );
  return Buffer.concat([bytes.subarray(0, 4), edited]);
}
