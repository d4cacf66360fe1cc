/**
 * UTF-8 encoding of keys into one reused buffer, so hashing a key allocates nothing. Written out rather than
 * using TextEncoder so the package runs on any JavaScript engine. Like TextEncoder (and Go's []byte(s) after
 * strings.ToValidUTF8), a lone surrogate is encoded as U+FFFD.
 * @internal
 */

let buffer = new Uint8Array(1024);

/** The buffer the last `encodeKey` wrote into; valid until the next call. */
export function keyBuffer(): Uint8Array {
  return buffer;
}

/** Writes the UTF-8 bytes of `key` into `keyBuffer()` and returns how many there are. */
export function encodeKey(key: string): number {
  const n = key.length;
  if (n * 3 > buffer.length) {
    buffer = new Uint8Array(n * 3);
  }
  const b = buffer;
  let at = 0;
  for (let i = 0; i < n; i++) {
    let c = key.charCodeAt(i);
    if (c < 0x80) {
      b[at++] = c;
    } else if (c < 0x800) {
      b[at++] = 0xc0 | (c >> 6);
      b[at++] = 0x80 | (c & 0x3f);
    } else {
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = i + 1 < n ? key.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
          i++;
          b[at++] = 0xf0 | (cp >> 18);
          b[at++] = 0x80 | ((cp >> 12) & 0x3f);
          b[at++] = 0x80 | ((cp >> 6) & 0x3f);
          b[at++] = 0x80 | (cp & 0x3f);
          continue;
        }
        c = 0xfffd;
      }
      b[at++] = 0xe0 | (c >> 12);
      b[at++] = 0x80 | ((c >> 6) & 0x3f);
      b[at++] = 0x80 | (c & 0x3f);
    }
  }
  return at;
}
