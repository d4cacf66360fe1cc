import { FAST, sampleKeys } from '../test/arbitraries';
import { planMigration, optimalMovedFraction } from './migration-plan';
import { HashRing } from './ring';

const ring = (...cells: Array<[string, number]>) =>
  HashRing.build(cells.map(([id, weight]) => ({ id, weight })));

describe('planMigration', () => {
  const keys = sampleKeys(50_000, 7);

  it('moves about 1/(n+1) of the keys, all into the added cell, close to the optimum', () => {
    const before = ring(['a', 1], ['b', 1], ['c', 1]);
    const after = ring(['a', 1], ['b', 1], ['c', 1], ['d', 1]);
    const plan = planMigration(keys, before, after);
    expect(plan.total).toBe(keys.length);
    expect(plan.moves).toHaveLength(plan.moved);
    expect(new Set(plan.moves.map((m) => m.to))).toEqual(new Set(['d']));
    expect(plan.optimalMoved).toBeCloseTo(keys.length / 4, 6);
    expect(plan.moved / plan.optimalMoved).toBeGreaterThan(0.9);
    expect(plan.moved / plan.optimalMoved).toBeLessThan(1.1);
    const d = plan.cells.find((c) => c.id === 'd')!;
    expect(d).toMatchObject({ before: 0, movingOut: 0, movingIn: plan.moved, after: plan.moved });
    expect(plan.flows.reduce((sum, f) => sum + f.count, 0)).toBe(plan.moved);
    expect(plan.flows.every((f) => f.to === 'd')).toBe(true);
  });

  it('keeps per-cell counts consistent: before − out + in = after', () => {
    const plan = planMigration(keys, ring(['a', 1], ['b', 2], ['c', 1]), ring(['b', 2], ['c', 3], ['e', 1]));
    for (const cell of plan.cells) expect(cell.before - cell.movingOut + cell.movingIn).toBe(cell.after);
    expect(plan.cells.map((c) => c.id)).toEqual(['a', 'b', 'c', 'e']);
    expect(plan.cells.find((c) => c.id === 'a')!.after).toBe(0);
  });

  it('moves nothing for an identical ring, and can leave the move list out', () => {
    const same = planMigration(keys, ring(['a', 1], ['b', 1]), ring(['b', 1], ['a', 1]), {
      includeMoves: false,
    });
    expect(same).toMatchObject({ moved: 0, moves: [], flows: [], optimalMoved: 0 });
    const counted = planMigration(keys, ring(['a', 1]), ring(['a', 1], ['b', 1]), { includeMoves: false });
    expect(counted.moved).toBeGreaterThan(0);
    expect(counted.moves).toEqual([]);
  });

  it('computes the optimum from weight shares', () => {
    expect(
      optimalMovedFraction(
        HashRing.build([{ id: 'a' }], FAST),
        HashRing.build([{ id: 'a' }, { id: 'b', weight: 3 }], FAST),
      ),
    ).toBeCloseTo(0.75);
    expect(
      optimalMovedFraction(
        HashRing.build([{ id: 'a' }, { id: 'b' }], FAST),
        HashRing.build([{ id: 'a' }], FAST),
      ),
    ).toBeCloseTo(0.5);
  });
});
