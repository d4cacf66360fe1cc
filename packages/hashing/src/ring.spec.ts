import fc from 'fast-check';

import { cells, FAST, keys, sampleKeys } from '../test/arbitraries';
import { HashingErrorCode } from './errors';
import { DEFAULT_POINTS_PER_WEIGHT, HashRing, MAX_POINTS, type RingCell } from './ring';

const without = (list: readonly RingCell[], id: string) => list.filter((cell) => cell.id !== id);

describe('HashRing', () => {
  it('gives every cell weight × pointsPerWeight points', () => {
    const ring = HashRing.build([{ id: 'a' }, { id: 'b', weight: 3 }]);
    expect(ring.pointCount).toBe(4 * DEFAULT_POINTS_PER_WEIGHT);
    expect(ring.cells).toEqual([
      { id: 'a', weight: 1 },
      { id: 'b', weight: 3 },
    ]);
  });

  it('puts every key in the only cell of a one-cell ring, with no backup', () => {
    const ring = HashRing.build([{ id: 'solo' }], FAST);
    expect(ring.locate('default/web')).toEqual({ primary: 'solo', backup: undefined });
    expect(ring.successors('default/web', 3)).toEqual(['solo']);
  });

  it('backup(key) is lookup(key) on the ring without the primary', () => {
    fc.assert(
      fc.property(cells(2), keys, (list, keyList) => {
        const ring = HashRing.build(list, FAST);
        for (const key of keyList) {
          const { primary, backup } = ring.locate(key);
          expect(primary).toBe(ring.lookup(key));
          expect(backup).not.toBe(primary);
          expect(backup).toBe(HashRing.build(without(list, primary), FAST).lookup(key));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('successors are the primary, the backup, then the next distinct cells clockwise', () => {
    fc.assert(
      fc.property(cells(3), keys, (list, keyList) => {
        const ring = HashRing.build(list, FAST);
        for (const key of keyList) {
          const [primary, backup, third] = ring.successors(key, 3);
          expect([primary, backup]).toEqual([ring.lookup(key), ring.backup(key)]);
          const rest = HashRing.build(without(without(list, primary!), backup!), FAST);
          expect(third).toBe(rest.lookup(key));
        }
      }),
      { numRuns: 100 },
    );
  });

  it('does not depend on the order of the cells', () => {
    fc.assert(
      fc.property(cells(1), keys, fc.nat(), (list, keyList, seed) => {
        const shuffled = [...list].sort(
          (a, b) => ((a.id.length * 31 + seed) % 7) - ((b.id.length * 31 + seed) % 7),
        );
        const one = HashRing.build(list, FAST);
        const two = HashRing.build(shuffled.reverse(), FAST);
        for (const key of keyList) expect(two.locate(key)).toEqual(one.locate(key));
      }),
      { numRuns: 200 },
    );
  });

  it('moves keys only into an added cell, never between the cells that stay', () => {
    fc.assert(
      fc.property(cells(2), keys, (list, keyList) => {
        const [added, ...kept] = list;
        const before = HashRing.build(kept, FAST);
        const after = HashRing.build(list, FAST);
        for (const key of keyList) {
          const to = after.lookup(key);
          if (to !== before.lookup(key)) expect(to).toBe(added!.id);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('moves only the keys of a removed cell, each to its backup', () => {
    fc.assert(
      fc.property(cells(2), keys, (list, keyList) => {
        const removed = list[0]!.id;
        const before = HashRing.build(list, FAST);
        const after = HashRing.build(without(list, removed), FAST);
        for (const key of keyList) {
          const { primary, backup } = before.locate(key);
          expect(after.lookup(key)).toBe(primary === removed ? backup : primary);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('moves keys only to or from a cell whose weight changes', () => {
    fc.assert(
      fc.property(cells(2), keys, fc.integer({ min: 1, max: 6 }), (list, keyList, weight) => {
        const changed = list[0]!.id;
        const before = HashRing.build(list, FAST);
        const after = HashRing.build([{ id: changed, weight }, ...list.slice(1)], FAST);
        for (const key of keyList) {
          const from = before.lookup(key);
          const to = after.lookup(key);
          if (from !== to) expect([from, to]).toContain(changed);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('balances 10 equal cells within 5% of the mean (default settings)', () => {
    const ring = HashRing.build(Array.from({ length: 10 }, (_, i) => ({ id: `cell-${i}` })));
    const shares = [...ring.shares().values()];
    expect(shares.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    expect(Math.max(...shares) * 10).toBeLessThanOrEqual(1.05);
    expect(Math.min(...shares) * 10).toBeGreaterThanOrEqual(0.95);
  });

  it('gives each cell a share of keys proportional to its weight', () => {
    const weights = [1, 2, 3, 4];
    const ring = HashRing.build(weights.map((weight, i) => ({ id: `w${i}`, weight })));
    const counts = new Map<string, number>();
    const sample = sampleKeys(200_000);
    for (const key of sample) {
      const cell = ring.lookup(key);
      counts.set(cell, (counts.get(cell) ?? 0) + 1);
    }
    const shares = ring.shares();
    weights.forEach((weight, i) => {
      const share = (counts.get(`w${i}`) ?? 0) / sample.length;
      expect(Math.abs(share - weight / 10) / (weight / 10)).toBeLessThan(0.05);
      expect(Math.abs(shares.get(`w${i}`)! - weight / 10) / (weight / 10)).toBeLessThan(0.05);
    });
  });

  it.each([
    [[], HashingErrorCode.EmptyRing, /at least one cell/],
    [[{ id: 'a' }, { id: 'a' }], HashingErrorCode.DuplicateCell, /"a" appears more than once/],
    [[{ id: '' }], HashingErrorCode.InvalidCellId, /non-empty string/],
    [
      [{ id: 'a', weight: 0 }],
      HashingErrorCode.InvalidWeight,
      /"a": weight must be an integer from 1 to 1000, got 0/,
    ],
    [[{ id: 'a', weight: 1.5 }], HashingErrorCode.InvalidWeight, /got 1.5/],
    [[{ id: 'a', weight: 1001 }], HashingErrorCode.InvalidWeight, /got 1001/],
  ])('rejects %j with %s', (list, code, message) => {
    expect(() => HashRing.build(list as RingCell[])).toThrow(
      expect.objectContaining({ code, message: expect.stringMatching(message) }),
    );
  });

  it('rejects bad options and rings too large to hold', () => {
    expect(() => HashRing.build([{ id: 'a' }], { pointsPerWeight: 0 })).toThrow(
      expect.objectContaining({ code: HashingErrorCode.InvalidRingOption }),
    );
    expect(() => HashRing.build([{ id: 'a', weight: 2 }], { pointsPerWeight: MAX_POINTS })).toThrow(
      expect.objectContaining({ code: HashingErrorCode.RingTooLarge }),
    );
  });

  it('places keys of any Unicode content', () => {
    const ring = HashRing.build([{ id: 'a' }, { id: 'b' }], FAST);
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (key) => {
        expect(['a', 'b']).toContain(ring.lookup(key));
      }),
    );
  });
});
