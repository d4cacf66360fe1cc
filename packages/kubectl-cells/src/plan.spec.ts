import { parseCellSetSpec } from '@cellfed/api';
import { planChange } from './plan.ts';

const spec = parseCellSetSpec({
  cells: ['a', 'b', 'c'].map((id) => ({ id, state: 'Normal', kubeconfigSecretRef: { name: id } })),
});
const keys = Array.from({ length: 3000 }, (_, i) => `ns-${i % 7}/obj-${i}`);

describe('planChange', () => {
  it('moves about a quarter into a fourth cell, only into it, close to the optimum', () => {
    const plan = planChange(spec, { kind: 'add', id: 'd', weight: 1 }, keys);
    expect(plan.total).toBe(3000);
    expect(plan.optimal).toBe(750);
    expect(plan.moved).toBeGreaterThan(650);
    expect(plan.moved).toBeLessThan(850);
    expect(plan.flows.every((flow) => flow.to === 'd')).toBe(true);
    expect(plan.cells.find((cell) => cell.id === 'd')).toMatchObject({ before: 0, in: plan.moved });
  });

  it('moves exactly the drained cell’s objects, to the others', () => {
    const plan = planChange(spec, { kind: 'drain', id: 'b' }, keys);
    const b = plan.cells.find((cell) => cell.id === 'b')!;
    expect(plan.moved).toBe(b.before);
    expect(b.after).toBe(0);
    expect(plan.flows.every((flow) => flow.from === 'b')).toBe(true);
  });

  it('gives a heavier cell more', () => {
    const plan = planChange(spec, { kind: 'weight', id: 'a', weight: 2 }, keys);
    const a = plan.cells.find((cell) => cell.id === 'a')!;
    expect(a.after).toBeGreaterThan(a.before);
    expect(plan.flows.every((flow) => flow.to === 'a')).toBe(true);
  });

  it.each([
    [{ kind: 'add', id: 'a', weight: 1 } as const, 'cell a is already in the CellSet (Normal)'],
    [{ kind: 'drain', id: 'x' } as const, 'cell x holds no objects now (it is not in the CellSet)'],
  ])('refuses %j: %s', (change, message) => {
    expect(() => planChange(spec, change, keys)).toThrow(message);
  });
});
