/**
 * Straightforward BigInt implementations of XXH64 and SplitMix64, written from the specifications and
 * sharing no code with the library: the 32-bit-half arithmetic is checked against them.
 */
const MASK = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;

const rotl = (x: bigint, r: bigint) => ((x << r) | (x >> (64n - r))) & MASK;
const u64le = (b: Uint8Array, p: number) => {
  let v = 0n;
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(b[p + i]!);
  return v;
};
const u32le = (b: Uint8Array, p: number) =>
  BigInt(b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16)) + (BigInt(b[p + 3]!) << 24n);
const round = (acc: bigint, input: bigint) => (rotl((acc + input * P2) & MASK, 31n) * P1) & MASK;
const merge = (acc: bigint, v: bigint) => (((acc ^ round(0n, v)) * P1) & MASK) + P4;

export function referenceXxh64(b: Uint8Array): bigint {
  const n = b.length;
  let p = 0;
  let h: bigint;
  if (n >= 32) {
    let v1 = (P1 + P2) & MASK;
    let v2 = P2;
    let v3 = 0n;
    let v4 = (0n - P1) & MASK;
    for (; p + 32 <= n; p += 32) {
      v1 = round(v1, u64le(b, p));
      v2 = round(v2, u64le(b, p + 8));
      v3 = round(v3, u64le(b, p + 16));
      v4 = round(v4, u64le(b, p + 24));
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & MASK;
    for (const v of [v1, v2, v3, v4]) h = merge(h, v) & MASK;
  } else {
    h = P5;
  }
  h = (h + BigInt(n)) & MASK;
  for (; p + 8 <= n; p += 8) h = (rotl(h ^ round(0n, u64le(b, p)), 27n) * P1 + P4) & MASK;
  if (p + 4 <= n) {
    h = (rotl(h ^ ((u32le(b, p) * P1) & MASK), 23n) * P2 + P3) & MASK;
    p += 4;
  }
  for (; p < n; p++) h = (rotl(h ^ ((BigInt(b[p]!) * P5) & MASK), 11n) * P1) & MASK;
  h ^= h >> 33n;
  h = (h * P2) & MASK;
  h ^= h >> 29n;
  h = (h * P3) & MASK;
  h ^= h >> 32n;
  return h;
}

export function referenceSplitmix64(seed: bigint, count: number): bigint[] {
  const out: bigint[] = [];
  let state = seed;
  for (let i = 0; i < count; i++) {
    state = (state + 0x9e3779b97f4a7c15n) & MASK;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    out.push(z ^ (z >> 31n));
  }
  return out;
}

export const split = (v: bigint): [number, number] => [Number(v >> 32n), Number(v & 0xffffffffn)];
export const join = (hi: number, lo: number): bigint => (BigInt(hi) << 32n) | BigInt(lo);
