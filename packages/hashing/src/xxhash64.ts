/**
 * XXH64 (xxHash, 64-bit variant, seed 0) over bytes, computed on 32-bit halves.
 * Reference: https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md — the same function as Go's
 * github.com/cespare/xxhash/v2 Sum64 and Python's xxhash.xxh64_intdigest.
 * @internal
 */
import { addHi, addLo, mulHi, mulLo, rotlHi, rotlLo } from './uint64';

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

// Results of round() and mergeRound(): module-level numbers rather than a returned object, so the hot path
// allocates nothing.
let outH = 0;
let outL = 0;

function readU32(b: Uint8Array, p: number): number {
  return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
}

/** round(acc, input) = rotl(acc + input * P2, 31) * P1, into `pair`. */
function round(accH: number, accL: number, inH: number, inL: number): void {
  const tH = mulHi(inH, inL, P2H, P2L);
  const tL = mulLo(inH, inL, P2H, P2L);
  const sH = addHi(accH, accL, tH, tL);
  const sL = addLo(accH, accL, tH, tL);
  const rH = rotlHi(sH, sL, 31);
  const rL = rotlLo(sH, sL, 31);
  outH = mulHi(rH, rL, P1H, P1L);
  outL = mulLo(rH, rL, P1H, P1L);
}

/** mergeRound(acc, v) = (acc ^ round(0, v)) * P1 + P4, into `pair`. */
function mergeRound(accH: number, accL: number, vH: number, vL: number): void {
  round(0, 0, vH, vL);
  const xH = (accH ^ outH) >>> 0;
  const xL = (accL ^ outL) >>> 0;
  const mH = mulHi(xH, xL, P1H, P1L);
  const mL = mulLo(xH, xL, P1H, P1L);
  outH = addHi(mH, mL, P4H, P4L);
  outL = addLo(mH, mL, P4H, P4L);
}

/**
 * Hashes `length` bytes of `b` with XXH64, seed 0, and writes [hi, lo] into `out`.
 */
export function xxh64Into(b: Uint8Array, length: number, out: Uint32Array): void {
  let p = 0;
  let hH: number;
  let hL: number;

  if (length >= 32) {
    // v1 = P1 + P2, v2 = P2, v3 = 0, v4 = -P1 (all mod 2^64)
    let v1H = addHi(P1H, P1L, P2H, P2L);
    let v1L = addLo(P1H, P1L, P2H, P2L);
    let v2H = P2H;
    let v2L = P2L;
    let v3H = 0;
    let v3L = 0;
    // -P1 = ~P1 + 1; P1's low half is non-zero, so the +1 never carries into the high half.
    let v4H = ~P1H >>> 0;
    let v4L = (~P1L + 1) >>> 0;
    const limit = length - 32;
    while (p <= limit) {
      round(v1H, v1L, readU32(b, p + 4), readU32(b, p));
      v1H = outH;
      v1L = outL;
      round(v2H, v2L, readU32(b, p + 12), readU32(b, p + 8));
      v2H = outH;
      v2L = outL;
      round(v3H, v3L, readU32(b, p + 20), readU32(b, p + 16));
      v3H = outH;
      v3L = outL;
      round(v4H, v4L, readU32(b, p + 28), readU32(b, p + 24));
      v4H = outH;
      v4L = outL;
      p += 32;
    }
    // h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)
    hH = rotlHi(v1H, v1L, 1);
    hL = rotlLo(v1H, v1L, 1);
    let rH = rotlHi(v2H, v2L, 7);
    let rL = rotlLo(v2H, v2L, 7);
    let sH = addHi(hH, hL, rH, rL);
    hL = addLo(hH, hL, rH, rL);
    hH = sH;
    rH = rotlHi(v3H, v3L, 12);
    rL = rotlLo(v3H, v3L, 12);
    sH = addHi(hH, hL, rH, rL);
    hL = addLo(hH, hL, rH, rL);
    hH = sH;
    rH = rotlHi(v4H, v4L, 18);
    rL = rotlLo(v4H, v4L, 18);
    sH = addHi(hH, hL, rH, rL);
    hL = addLo(hH, hL, rH, rL);
    hH = sH;
    mergeRound(hH, hL, v1H, v1L);
    mergeRound(outH, outL, v2H, v2L);
    mergeRound(outH, outL, v3H, v3L);
    mergeRound(outH, outL, v4H, v4L);
    hH = outH;
    hL = outL;
  } else {
    hH = P5H;
    hL = P5L;
  }

  // h += length (length < 2^32 here: keys are strings held in memory)
  const lenSum = hL + length;
  hH = (hH + (lenSum >= 4294967296 ? 1 : 0)) >>> 0;
  hL = lenSum >>> 0;

  // Remaining 8-byte lanes: h = rotl(h ^ round(0, lane), 27) * P1 + P4
  while (p + 8 <= length) {
    round(0, 0, readU32(b, p + 4), readU32(b, p));
    const xH = (hH ^ outH) >>> 0;
    const xL = (hL ^ outL) >>> 0;
    const rH = rotlHi(xH, xL, 27);
    const rL = rotlLo(xH, xL, 27);
    const mH = mulHi(rH, rL, P1H, P1L);
    const mL = mulLo(rH, rL, P1H, P1L);
    hH = addHi(mH, mL, P4H, P4L);
    hL = addLo(mH, mL, P4H, P4L);
    p += 8;
  }

  // A remaining 4-byte lane: h = rotl(h ^ (lane * P1), 23) * P2 + P3
  if (p + 4 <= length) {
    const w = readU32(b, p);
    const xH = (hH ^ mulHi(0, w, P1H, P1L)) >>> 0;
    const xL = (hL ^ mulLo(0, w, P1H, P1L)) >>> 0;
    const rH = rotlHi(xH, xL, 23);
    const rL = rotlLo(xH, xL, 23);
    const mH = mulHi(rH, rL, P2H, P2L);
    const mL = mulLo(rH, rL, P2H, P2L);
    hH = addHi(mH, mL, P3H, P3L);
    hL = addLo(mH, mL, P3H, P3L);
    p += 4;
  }

  // Remaining bytes: h = rotl(h ^ (byte * P5), 11) * P1
  while (p < length) {
    const c = b[p]!;
    const xH = (hH ^ mulHi(0, c, P5H, P5L)) >>> 0;
    const xL = (hL ^ mulLo(0, c, P5H, P5L)) >>> 0;
    const rH = rotlHi(xH, xL, 11);
    const rL = rotlLo(xH, xL, 11);
    hH = mulHi(rH, rL, P1H, P1L);
    hL = mulLo(rH, rL, P1H, P1L);
    p += 1;
  }

  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32
  hL = (hL ^ (hH >>> 1)) >>> 0;
  let mH = mulHi(hH, hL, P2H, P2L);
  let mL = mulLo(hH, hL, P2H, P2L);
  hH = mH;
  hL = (mL ^ ((mL >>> 29) | (mH << 3))) >>> 0;
  hH = (hH ^ (hH >>> 29)) >>> 0;
  mH = mulHi(hH, hL, P3H, P3L);
  mL = mulLo(hH, hL, P3H, P3L);
  out[0] = mH;
  out[1] = (mL ^ mH) >>> 0;
}
