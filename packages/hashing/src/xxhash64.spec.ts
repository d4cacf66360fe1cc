import fc from 'fast-check';

import { join, referenceSplitmix64, referenceXxh64 } from '../test/bigint-reference';
import { encodeKey, keyBuffer } from './key-bytes';
import { hash64, hash64Hex } from './key-hash';
import { splitmix64Fill } from './splitmix64';
import { xxh64Into } from './xxhash64';

const out = new Uint32Array(2);
const xxh64 = (bytes: Uint8Array) => {
  xxh64Into(bytes, bytes.length, out);
  return join(out[0]!, out[1]!);
};

describe('XXH64', () => {
  it.each([
    ['', 'ef46db3751d8e999'],
    ['a', 'd24ec4f1a98c6e5b'],
    ['abc', '44bc2cf5ad770999'],
    ['Nobody inspects the spammish repetition', 'fbcea83c8a378bf1'],
  ])('matches the published value for %j', (input, expected) => {
    expect(hash64Hex(input)).toBe(expected);
    expect(hash64(input)).toBe(BigInt(`0x${expected}`));
  });

  it('matches a BigInt implementation of the specification on inputs of every length class', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 200 }), (bytes) => {
        expect(xxh64(bytes)).toBe(referenceXxh64(bytes));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('key encoding', () => {
  it('is UTF-8, with lone surrogates as U+FFFD like TextEncoder', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (key) => {
        const length = encodeKey(key);
        expect(Buffer.from(keyBuffer().subarray(0, length))).toEqual(
          Buffer.from(new TextEncoder().encode(key)),
        );
      }),
      { numRuns: 3000 },
    );
    const lone = '\ud800x';
    expect([...keyBuffer().subarray(0, encodeKey(lone))]).toEqual([0xef, 0xbf, 0xbd, 0x78]);
  });

  it('hashes long keys that outgrow the initial buffer', () => {
    const key = 'ns/'.padEnd(5000, 'é');
    expect(hash64(key)).toBe(referenceXxh64(new TextEncoder().encode(key)));
  });
});

describe('SplitMix64', () => {
  it('produces the published sequence for seed 0', () => {
    const hi = new Uint32Array(3);
    const lo = new Uint32Array(3);
    splitmix64Fill(0, 0, 3, hi, lo, 0);
    expect([0, 1, 2].map((i) => join(hi[i]!, lo[i]!))).toEqual([
      0xe220a8397b1dcdafn,
      0x6e789e6aa1b965f4n,
      0x06c45d188009454fn,
    ]);
  });

  it('matches a BigInt implementation for any seed', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (seed) => {
        const hi = new Uint32Array(8);
        const lo = new Uint32Array(8);
        splitmix64Fill(Number(seed >> 32n), Number(seed & 0xffffffffn), 8, hi, lo, 0);
        expect(Array.from(hi, (h, i) => join(h, lo[i]!))).toEqual(referenceSplitmix64(seed, 8));
      }),
      { numRuns: 2000 },
    );
  });
});
