/**
 * Unsigned 64-bit arithmetic on pairs of 32-bit halves (hi, lo).
 *
 * JavaScript numbers are exact only up to 2^53 and bitwise operators truncate to 32 bits, so every 64-bit
 * operation is split into a function for the high half and one for the low half. They are pure and tiny so
 * V8 inlines them; BigInt would allocate on every step and cost an order of magnitude more.
 * @internal
 */

const TWO_32 = 4294967296;
const INV_TWO_32 = 1 / TWO_32;

/** Low 32 bits of a + b. */
export function addLo(_ah: number, al: number, _bh: number, bl: number): number {
  return (al + bl) >>> 0;
}

/** High 32 bits of a + b (mod 2^64). */
export function addHi(ah: number, al: number, bh: number, bl: number): number {
  return (ah + bh + (al + bl >= TWO_32 ? 1 : 0)) >>> 0;
}

/** Low 32 bits of a * b. */
export function mulLo(_ah: number, al: number, _bh: number, bl: number): number {
  return Math.imul(al, bl) >>> 0;
}

/** High 32 bits of a * b (mod 2^64). */
export function mulHi(ah: number, al: number, bh: number, bl: number): number {
  // High half of the exact product al * bl: the double product is off by at most 2^11 (half an ulp below
  // 2^64) and the low half is exact from Math.imul, so (product - low) / 2^32 is within 2^-20 of the true
  // integer and rounding recovers it exactly.
  const low = Math.imul(al, bl) >>> 0;
  const high = Math.round((al * bl - low) * INV_TWO_32);
  return (high + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}

/** High 32 bits of rotl(a, r), 0 < r < 32. */
export function rotlHi(ah: number, al: number, r: number): number {
  return ((ah << r) | (al >>> (32 - r))) >>> 0;
}

/** Low 32 bits of rotl(a, r), 0 < r < 32. */
export function rotlLo(ah: number, al: number, r: number): number {
  return ((al << r) | (ah >>> (32 - r))) >>> 0;
}

/** Formats a 64-bit value as 16 lowercase hex digits. */
export function toHex(hi: number, lo: number): string {
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

/** Combines the halves into a bigint (for the public API and tests, never on the hot path). */
export function toBigInt(hi: number, lo: number): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo);
}
