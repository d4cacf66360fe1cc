/**
 * Where each element of a JSON document's top-level array field (a list's `items`, a Table's `rows`) lies
 * in its bytes, found in one pass that respects strings and escapes. The router then passes every object on
 * exactly as the cell wrote it, instead of serialising what it parsed all over again.
 */
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** [start, end) of each element of top-level `field`; undefined if the document has no such array. */
export function arrayElements(body: Uint8Array, field: string): [number, number][] | undefined {
  const wanted = Buffer.from(`"${field}"`);
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  let depth = 0;
  let keyEnd = -1; // just past the last string that closed at depth 1
  let keyStart = -1;
  let inField = false;
  let elementStart = -1;
  const elements: [number, number][] = [];
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === QUOTE) {
      const start = i;
      i = stringEnd(bytes, i);
      if (i < 0) return undefined;
      if (depth === 1) [keyStart, keyEnd] = [start, i + 1];
      if (inField && depth === 2 && elementStart < 0) elementStart = start;
      continue;
    }
    if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (
        byte === OPEN_ARRAY &&
        depth === 1 &&
        keyEnd >= 0 &&
        followsKey(bytes, keyEnd, i) &&
        bytes.subarray(keyStart, keyEnd).equals(wanted)
      ) {
        inField = true;
      } else if (inField && depth === 2 && elementStart < 0) {
        elementStart = i;
      }
      depth += 1;
      continue;
    }
    if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth -= 1;
      if (inField && depth === 1) {
        if (elementStart >= 0) elements.push([elementStart, trimEnd(bytes, elementStart, i)]);
        return elements;
      }
      continue;
    }
    if (inField && depth === 2) {
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

/** The index of the quote that closes the string opening at `open`; -1 if it never closes. */
export function stringEnd(bytes: Buffer, open: number): number {
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
export function followsKey(bytes: Buffer, keyEnd: number, at: number): boolean {
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
