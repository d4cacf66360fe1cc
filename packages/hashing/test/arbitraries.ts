import fc from 'fast-check';

import type { RingCell } from '../src/ring';

/** Small point counts keep property runs fast; the properties do not depend on the count. */
export const FAST = { pointsPerWeight: 32 } as const;

export const cellId = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);

export const cells = (minLength = 1, maxLength = 8): fc.Arbitrary<RingCell[]> =>
  fc.uniqueArray(fc.record({ id: cellId, weight: fc.integer({ min: 1, max: 4 }) }), {
    minLength,
    maxLength,
    selector: (cell) => cell.id,
  });

const objectKeyString = fc
  .tuple(fc.stringMatching(/^[a-z0-9-]{1,20}$/), fc.stringMatching(/^[a-z0-9.-]{1,40}$/))
  .map(([ns, name]) => `${ns}/${name}`);

export const keys = fc.array(fc.oneof(objectKeyString, fc.string({ maxLength: 30 })), {
  minLength: 1,
  maxLength: 50,
});

/** Deterministic pseudo-random keys for statistics. */
export function sampleKeys(count: number, seed = 1): string[] {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
  return Array.from({ length: count }, () => `ns-${next() % 1000}/app-${next().toString(36)}`);
}
