import { shownVersion } from '../collections/source-versions.ts';
import { appendToNested, lengthDelimited, nestedField } from '../request/protobuf-wire.ts';

const CELLS = Buffer.from('"cells"');

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
  // A Table row (its first field is `cells`, as kube-apiserver writes rows) has its object under `object`.
  const first = skipSpace(bytes, root + 1);
  const object = bytes.subarray(first, first + 7).equals(CELLS)
    ? valueAt(bytes, root + 1, 'object', 0x7b)
    : root;
  if (object < 0) return json;
  return withVersionIn(bytes, object + 1, 'metadata', (own) => shownVersion(source, own)) ?? json;
}

/**
 * The bytes with the `resourceVersion` of the object under the key `holder` (`metadata`, `preconditions`)
 * among the fields of the object opened before `from` replaced by what `map` makes of it; undefined when
 * there is none or `map` gives nothing.
 */
export function withVersionIn(
  bytes: Buffer,
  from: number,
  holder: string,
  map: (version: string) => string | undefined,
): Buffer | undefined {
  const object = valueAt(bytes, from, holder, 0x7b);
  const value = object < 0 ? -1 : valueAt(bytes, object + 1, 'resourceVersion', 0x22);
  if (value < 0) return undefined;
  const valueStart = value + 1;
  const valueEnd = bytes.indexOf(0x22, valueStart);
  if (valueEnd < 0) return undefined;
  const mapped = map(bytes.toString('latin1', valueStart, valueEnd));
  if (mapped === undefined) return undefined;
  return Buffer.concat([bytes.subarray(0, valueStart), Buffer.from(mapped), bytes.subarray(valueEnd)]);
}

/**
 * Where the value of `key` starts (its first byte, which must be `opener`: `{`, `[` or `"`) among the fields
 * of the object opened just before `from`, not inside a nested value (an annotation keyed `resourceVersion`,
 * a custom resource's `data` holding a `metadata`); -1 when the object has no such field. Strings are
 * skipped with their escapes, so no value is mistaken for a key, and whitespace is allowed where JSON allows
 * it (kube-apiserver pretty-prints for `?pretty` and for curl).
 */
function valueAt(bytes: Buffer, from: number, key: string, opener: number): number {
  const quoted = quotedKey(key);
  let depth = 0;
  for (let at = from; at < bytes.length; at++) {
    const byte = bytes[at]!;
    if (byte === 0x22) {
      if (depth === 0 && bytes.subarray(at, at + quoted.length).equals(quoted)) {
        let next = skipSpace(bytes, at + quoted.length);
        if (bytes[next] === 0x3a) {
          next = skipSpace(bytes, next + 1);
          return bytes[next] === opener ? next : -1;
        }
      }
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

/** The few keys looked for, quoted, made once (every answer is searched for them). */
const QUOTED_KEYS = new Map<string, Buffer>();
function quotedKey(key: string): Buffer {
  let quoted = QUOTED_KEYS.get(key);
  if (!quoted) QUOTED_KEYS.set(key, (quoted = Buffer.from(`"${key}"`)));
  return quoted;
}

function skipSpace(bytes: Buffer, at: number): number {
  while (
    at < bytes.length &&
    (bytes[at] === 0x20 || bytes[at] === 0x0a || bytes[at] === 0x0d || bytes[at] === 0x09)
  )
    at += 1;
  return at;
}

/**
 * A single answer's JSON with its version as clients see it: an object, or a Table of one (`kubectl get
 * cm x`), whose own version and each row's object's are its source's. In the bytes: nothing else in the
 * answer is re-encoded (a custom resource's integers past 2^53 would not survive JSON.parse).
 */
export function showAnswerVersion(json: Buffer, source: string): Buffer | string {
  const root = json.indexOf(0x7b);
  const kind = root < 0 ? -1 : valueAt(json, root + 1, 'kind', 0x22);
  const table = kind >= 0 && json.subarray(kind, kind + 7).toString('latin1') === '"Table"';
  if (!table || valueAt(json, root + 1, 'rows', 0x5b) < 0) return withShownVersion(json, source);
  // A Table: its own metadata's version, then each row's object's.
  const bytes = withVersionIn(json, root + 1, 'metadata', (own) => shownVersion(source, own)) ?? json;
  const out: Buffer[] = [];
  let copied = 0;
  let at = valueAt(bytes, root + 1, 'rows', 0x5b) + 1;
  for (;;) {
    at = skipSpace(bytes, at);
    if (bytes[at] === 0x2c) {
      at += 1;
      continue;
    }
    if (bytes[at] !== 0x7b) break;
    const end = valueEnd(bytes, at);
    out.push(bytes.subarray(copied, at), Buffer.from(withShownVersion(bytes.subarray(at, end), source)));
    copied = at = end;
  }
  out.push(bytes.subarray(copied));
  return Buffer.concat(out);
}

/** Where the JSON value starting at `at` (an object or array) ends: just after its closing bracket. */
function valueEnd(bytes: Buffer, at: number): number {
  let depth = 0;
  for (; at < bytes.length; at++) {
    const byte = bytes[at]!;
    if (byte === 0x22) {
      for (at += 1; at < bytes.length && bytes[at] !== 0x22; at++) if (bytes[at] === 0x5c) at += 1;
    } else if (byte === 0x7b || byte === 0x5b) depth += 1;
    else if (byte === 0x7d || byte === 0x5d) {
      depth -= 1;
      if (depth === 0) return at + 1;
    }
  }
  return bytes.length;
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
