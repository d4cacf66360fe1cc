/**
 * Where each element of a JSON document's top-level array field (a list's `items`, a Table's `rows`) lies
 * in its bytes, found in one pass that respects strings and escapes (whole pages here; a list as it
 * streams in: json-list-splitter.ts, which finds its array with the same arrayStart). The router then passes every object on
 * exactly as the cell wrote it, instead of serialising what it parsed all over again.
 */
/** The bytes of JSON's structure, for scanners that never decode text. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
const COLON = 0x3a;
export const COMMA = 0x2c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;

/** [start, end) of each element of top-level `field`; undefined if the document has no such array. */
export function arrayElements(body: Uint8Array, field: string): [number, number][] | undefined {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const start = arrayStart(bytes, Buffer.from(`"${field}"`));
  if (start === undefined || start === 'whole') return undefined;
  let depth = 0; // inside the current element
  let elementStart = -1;
  const elements: [number, number][] = [];
  for (let i = start.bracket + 1; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === QUOTE) {
      const open = i;
      i = stringEnd(bytes, i);
      if (i < 0) return undefined;
      if (depth === 0 && elementStart < 0) elementStart = open;
      continue;
    }
    if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (depth === 0 && elementStart < 0) elementStart = i;
      depth += 1;
      continue;
    }
    if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      if (depth === 0) {
        if (elementStart >= 0) elements.push([elementStart, trimEnd(bytes, elementStart, i)]);
        return elements;
      }
      depth -= 1;
      continue;
    }
    if (depth === 0) {
      if (byte === COMMA) {
        elements.push([elementStart, trimEnd(bytes, elementStart, i)]);
        elementStart = -1;
      } else if (elementStart < 0 && !isSpace(byte)) {
        elementStart = i; // a number, true, false or null
      }
    }
  }
  return undefined;
}

/**
 * Where the top-level array `wanted` (a quoted key) opens: the offset of its key and of its `[`; 'whole'
 * when the document ends without it; undefined while the bytes end before either.
 */
export function arrayStart(
  bytes: Buffer,
  wanted: Buffer,
): { key: number; bracket: number } | 'whole' | undefined {
  return fieldValueStart(bytes, wanted, OPEN_ARRAY);
}

/**
 * [start, end) of the object value of top-level field `wanted` (a quoted key) of the JSON object in
 * `bytes`; undefined if it has no such field with an object value (or the bytes are not one object). The
 * first such field: an apiserver writes each key once.
 */
export function objectFieldSpan(bytes: Buffer, wanted: Buffer): [number, number] | undefined {
  const start = fieldValueStart(bytes, wanted, OPEN_OBJECT);
  if (start === undefined || start === 'whole') return undefined;
  const end = closingBracket(bytes, start.bracket);
  return end < 0 ? undefined : [start.bracket, end + 1];
}

/**
 * Where the value of top-level field `wanted` opens with `opener` (`[` or `{`): the offset of its key and
 * of its bracket; 'whole' when the document ends without it; undefined while the bytes end before either.
 */
function fieldValueStart(
  bytes: Buffer,
  wanted: Buffer,
  opener: number,
): { key: number; bracket: number } | 'whole' | undefined {
  let depth = 0;
  let key = -1;
  let keyEnd = -1;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === QUOTE) {
      const end = stringEnd(bytes, i);
      if (end < 0) return undefined;
      if (depth === 1) [key, keyEnd] = [i, end + 1];
      i = end;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (byte === opener && depth === 1 && keyEnd >= 0 && followsKey(bytes, keyEnd, i)) {
        if (bytes.subarray(key, keyEnd).equals(wanted)) return { key, bracket: i };
      }
      depth += 1;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth -= 1;
      if (depth === 0) return 'whole';
    }
  }
  return undefined;
}

/** The index of the bracket that closes the one at `open`; -1 if the bytes end first. */
function closingBracket(bytes: Buffer, open: number): number {
  let depth = 0;
  for (let i = open; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === QUOTE) {
      i = stringEnd(bytes, i);
      if (i < 0) return -1;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) depth += 1;
    else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** The index of the quote that closes the string opening at `open`; -1 if it never closes. */
function stringEnd(bytes: Buffer, open: number): number {
  let at = open;
  for (;;) {
    at = bytes.indexOf(QUOTE, at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
}

/** Whether only whitespace and one colon lie between a key's end and `at`. */
function followsKey(bytes: Buffer, keyEnd: number, at: number): boolean {
  let colons = 0;
  for (let i = keyEnd; i < at; i++) {
    if (bytes[i] === COLON) colons += 1;
    else if (!isSpace(bytes[i]!)) return false;
  }
  return colons === 1;
}

function trimEnd(bytes: Buffer, start: number, end: number): number {
  while (end > start && isSpace(bytes[end - 1]!)) end -= 1;
  return end;
}

export function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}
