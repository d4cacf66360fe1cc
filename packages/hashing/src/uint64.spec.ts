import fc from 'fast-check';

import { join, split } from '../test/bigint-reference';
import { addHi, addLo, mulHi, mulLo, rotlHi, rotlLo, toHex } from './uint64';

const MASK = (1n << 64n) - 1n;
const edges = [
  0n,
  1n,
  0xffffffffn,
  0x100000000n,
  0x80000000n,
  MASK,
  MASK - 1n,
  1n << 63n,
  0x9e3779b185ebca87n,
];
const u64 = fc.oneof(fc.bigInt({ min: 0n, max: MASK }), fc.constantFrom(...edges));

describe('uint64 on 32-bit halves', () => {
  it('multiplies exactly mod 2^64, including the products whose double rounding is worst', () => {
    fc.assert(
      fc.property(u64, u64, (a, b) => {
        const [ah, al] = split(a);
        const [bh, bl] = split(b);
        expect(join(mulHi(ah, al, bh, bl), mulLo(ah, al, bh, bl))).toBe((a * b) & MASK);
      }),
      { numRuns: 20000 },
    );
  });

  it('adds exactly mod 2^64', () => {
    fc.assert(
      fc.property(u64, u64, (a, b) => {
        const [ah, al] = split(a);
        const [bh, bl] = split(b);
        expect(join(addHi(ah, al, bh, bl), addLo(ah, al, bh, bl))).toBe((a + b) & MASK);
      }),
    );
  });

  it('rotates left', () => {
    fc.assert(
      fc.property(u64, fc.integer({ min: 1, max: 31 }), (a, r) => {
        const [ah, al] = split(a);
        const expected = ((a << BigInt(r)) | (a >> BigInt(64 - r))) & MASK;
        expect(join(rotlHi(ah, al, r), rotlLo(ah, al, r))).toBe(expected);
      }),
    );
  });

  it('formats as 16 hex digits', () => {
    expect(toHex(0, 1)).toBe('0000000000000001');
    expect(toHex(0xdeadbeef, 0x0badf00d)).toBe('deadbeef0badf00d');
  });
});
