import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { specOf } from '../test/cell-sets';
import { hash64Hex } from './key-hash';
import { DEFAULT_POINTS_PER_WEIGHT, HashRing } from './ring';
import { RoutingTable } from './routing-table';

interface Vectors {
  algorithm: string;
  pointsPerWeight: number;
  hashes: Array<{ key: string; xxh64: string }>;
  rings: Array<{
    name: string;
    cells: Array<{ id: string; weight: number }>;
    lookups: Array<{ key: string; primary: string; backup: string | null }>;
  }>;
  routing: Array<{
    name: string;
    cells: Array<{ id: string; state: 'Normal' | 'Joining' | 'Draining' | 'Down'; weight: number }>;
    routes: Array<{ key: string; oldCell: string; newCell: string; case: number }>;
  }>;
}

const vectors = JSON.parse(readFileSync(join(__dirname, '..', 'test-vectors.json'), 'utf8')) as Vectors;

describe('test-vectors.json (the mapping must never change by accident)', () => {
  it('is for this algorithm and these settings', () => {
    expect(vectors.algorithm).toBe('cellfed-ring-v1');
    expect(vectors.pointsPerWeight).toBe(DEFAULT_POINTS_PER_WEIGHT);
  });

  it.each(vectors.hashes.map((h) => [h.key, h.xxh64]))('hash of %j is %s', (key, expected) => {
    expect(hash64Hex(key)).toBe(expected);
  });

  describe.each(vectors.rings.map((r) => [r.name, r] as const))('ring %s', (_name, ring) => {
    it('places every key on the recorded primary and backup', () => {
      const built = HashRing.build(ring.cells);
      const actual = ring.lookups.map(({ key }) => {
        const { primary, backup } = built.locate(key);
        return { key, primary, backup: backup ?? null };
      });
      expect(actual).toEqual(ring.lookups);
    });
  });

  describe.each(vectors.routing.map((r) => [r.name, r] as const))('routing %s', (_name, set) => {
    it('gives every key the recorded old cell, new cell and case', () => {
      const table = RoutingTable.fromCellSet(
        specOf(set.cells.map((c) => [c.id, c.state, c.weight] as const)),
      );
      expect(
        set.routes.map(({ key }) => {
          const { oldCell, newCell, case: routeCase } = table.route(key);
          return { key, oldCell, newCell, case: routeCase };
        }),
      ).toEqual(set.routes);
    });
  });

  it('covers all four routing cases', () => {
    const cases = new Set(vectors.routing.flatMap((set) => set.routes.map((r) => r.case)));
    expect([...cases].sort()).toEqual([1, 2, 3, 4]);
  });
});
