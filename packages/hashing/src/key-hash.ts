/**
 * The ring position of a key: XXH64 (seed 0) of the key's UTF-8 bytes.
 */
import { encodeKey, keyBuffer } from './key-bytes';
import { toBigInt, toHex } from './uint64';
import { xxh64Into } from './xxhash64';

/**
 * Scratch the last `hashKey` wrote [hi, lo] into. Callers read it right away; nothing is allocated per key.
 * @internal
 */
export const keyPosition = new Uint32Array(2);

/** Hashes `key` into {@link keyPosition}. @internal */
export function hashKey(key: string): void {
  const length = encodeKey(key);
  xxh64Into(keyBuffer(), length, keyPosition);
}

/**
 * The 64-bit ring position of a key: XXH64 with seed 0 over the key's UTF-8 bytes.
 *
 * @example
 * ```ts
 * hash64('abc'); // 0x44bc2cf5ad770999n
 * ```
 */
export function hash64(key: string): bigint {
  hashKey(key);
  return toBigInt(keyPosition[0]!, keyPosition[1]!);
}

/** {@link hash64} as 16 lowercase hex digits, the form the test vectors use. */
export function hash64Hex(key: string): string {
  hashKey(key);
  return toHex(keyPosition[0]!, keyPosition[1]!);
}
