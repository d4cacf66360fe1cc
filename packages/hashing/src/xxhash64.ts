/**
 * XXH64 (xxHash, 64-bit variant, seed 0) over bytes, computed on 32-bit halves.
 * Reference: https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md — the same function as Go's
 * github.com/cespare/xxhash/v2 Sum64 and Python's xxhash.xxh64_intdigest.
 *
 * Written for speed on short inputs (object keys are 10–60 bytes): every intermediate is a local number,
 * never passed through module-level variables or objects (which would box them), and on the short-input
 * path rotations and low-half products are written out inline (rotl(x, r) → (hi << r | lo >>> 32 - r), …),
 * which measured about 20% faster than calling the helpers.
 * @internal
 */
import { addHi, mulHi, mulLo, rotlHi, rotlLo } from './uint64';

const P1H = 0x9e3779b1;
const P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d;
const P2L = 0x27d4eb4f;
const P3H = 0x165667b1;
const P3L = 0x9e3779f9;
const P4H = 0x85ebca77;
const P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f;
const P5L = 0x165667c5;

function readU32(b: Uint8Array, p: number): number {
  return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
}

/**
 * Hashes `length` bytes of `b` with XXH64, seed 0, and writes [hi, lo] into `out`.
 */
export function xxh64Into(b: Uint8Array, length: number, out: Uint32Array): void {
  let p = 0;
  let hH = P5H;
  let hL = P5L;
  if (length >= 32) {
    p = consumeStripes(b, length, out);
    hH = out[0]!;
    hL = out[1]!;
  }

  // h += length (length < 2^32: keys are strings held in memory)
  hH = addHi(hH, hL, 0, length);
  hL = (hL + length) >>> 0;

  // Remaining 8-byte lanes: k = rotl(lane * P2, 31) * P1; h = rotl(h ^ k, 27) * P1 + P4
  while (p + 8 <= length) {
    const iL = readU32(b, p);
    const iH = readU32(b, p + 4);
    let kH = mulHi(iH, iL, P2H, P2L);
    let kL = Math.imul(iL, P2L) >>> 0;
    let tH = ((kH << 31) | (kL >>> 1)) >>> 0;
    let tL = ((kL << 31) | (kH >>> 1)) >>> 0;
    kH = mulHi(tH, tL, P1H, P1L);
    kL = Math.imul(tL, P1L) >>> 0;
    hH = (hH ^ kH) >>> 0;
    hL = (hL ^ kL) >>> 0;
    tH = ((hH << 27) | (hL >>> 5)) >>> 0;
    tL = ((hL << 27) | (hH >>> 5)) >>> 0;
    const mH = mulHi(tH, tL, P1H, P1L);
    const mL = Math.imul(tL, P1L) >>> 0;
    hH = addHi(mH, mL, P4H, P4L);
    hL = (mL + P4L) >>> 0;
    p += 8;
  }

  // A remaining 4-byte lane: h = rotl(h ^ (lane * P1), 23) * P2 + P3
  if (p + 4 <= length) {
    const w = readU32(b, p);
    hH = (hH ^ mulHi(0, w, P1H, P1L)) >>> 0;
    hL = (hL ^ (Math.imul(w, P1L) >>> 0)) >>> 0;
    const tH = ((hH << 23) | (hL >>> 9)) >>> 0;
    const tL = ((hL << 23) | (hH >>> 9)) >>> 0;
    const mH = mulHi(tH, tL, P2H, P2L);
    const mL = Math.imul(tL, P2L) >>> 0;
    hH = addHi(mH, mL, P3H, P3L);
    hL = (mL + P3L) >>> 0;
    p += 4;
  }

  // Remaining bytes: h = rotl(h ^ (byte * P5), 11) * P1
  while (p < length) {
    const c = b[p]!;
    hH = (hH ^ mulHi(0, c, P5H, P5L)) >>> 0;
    hL = (hL ^ (Math.imul(c, P5L) >>> 0)) >>> 0;
    const tH = ((hH << 11) | (hL >>> 21)) >>> 0;
    const tL = ((hL << 11) | (hH >>> 21)) >>> 0;
    hH = mulHi(tH, tL, P1H, P1L);
    hL = Math.imul(tL, P1L) >>> 0;
    p += 1;
  }

  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32
  hL = (hL ^ (hH >>> 1)) >>> 0;
  let mH = mulHi(hH, hL, P2H, P2L);
  let mL = Math.imul(hL, P2L) >>> 0;
  hH = (mH ^ (mH >>> 29)) >>> 0;
  hL = (mL ^ ((mL >>> 29) | (mH << 3))) >>> 0;
  mH = mulHi(hH, hL, P3H, P3L);
  mL = Math.imul(hL, P3L) >>> 0;
  out[0] = mH;
  out[1] = (mL ^ mH) >>> 0;
}

/**
 * The 32-byte stripes of an input of 32 bytes or more (XXH64's four accumulators and their merge). Writes
 * the accumulated hash into `out` and returns the offset of the first byte not consumed.
 */
function consumeStripes(b: Uint8Array, length: number, out: Uint32Array): number {
  // Accumulators as [hi, lo] pairs: v1 = P1 + P2, v2 = P2, v3 = 0, v4 = -P1 (mod 2^64).
  // -P1 = ~P1 + 1; P1's low half is non-zero, so the +1 never carries into the high half.
  const acc = new Uint32Array([
    addHi(P1H, P1L, P2H, P2L),
    (P1L + P2L) >>> 0,
    P2H,
    P2L,
    0,
    0,
    ~P1H >>> 0,
    (~P1L + 1) >>> 0,
  ]);
  let p = 0;
  for (; p + 32 <= length; p += 32) {
    for (let lane = 0; lane < 4; lane++) {
      round(acc, lane * 2, readU32(b, p + lane * 8 + 4), readU32(b, p + lane * 8));
    }
  }
  // h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)
  let hH = 0;
  let hL = 0;
  const rotations = [1, 7, 12, 18];
  for (let lane = 0; lane < 4; lane++) {
    const r = rotations[lane]!;
    const rH = rotlHi(acc[lane * 2]!, acc[lane * 2 + 1]!, r);
    const rL = rotlLo(acc[lane * 2]!, acc[lane * 2 + 1]!, r);
    hH = addHi(hH, hL, rH, rL);
    hL = (hL + rL) >>> 0;
  }
  // h = (h ^ round(0, v)) * P1 + P4, for each accumulator v
  const k = new Uint32Array(2);
  for (let lane = 0; lane < 4; lane++) {
    k[0] = 0;
    k[1] = 0;
    round(k, 0, acc[lane * 2]!, acc[lane * 2 + 1]!);
    const xH = (hH ^ k[0]) >>> 0;
    const xL = (hL ^ k[1]) >>> 0;
    const mH = mulHi(xH, xL, P1H, P1L);
    const mL = mulLo(xH, xL, P1H, P1L);
    hH = addHi(mH, mL, P4H, P4L);
    hL = (mL + P4L) >>> 0;
  }
  out[0] = hH;
  out[1] = hL;
  return p;
}

/** acc[at..at+1] = rotl(acc + input * P2, 31) * P1 */
function round(acc: Uint32Array, at: number, inH: number, inL: number): void {
  const tH = mulHi(inH, inL, P2H, P2L);
  const tL = mulLo(inH, inL, P2H, P2L);
  const sH = addHi(acc[at]!, acc[at + 1]!, tH, tL);
  const sL = (acc[at + 1]! + tL) >>> 0;
  const rH = rotlHi(sH, sL, 31);
  const rL = rotlLo(sH, sL, 31);
  acc[at] = mulHi(rH, rL, P1H, P1L);
  acc[at + 1] = mulLo(rH, rL, P1H, P1L);
}
