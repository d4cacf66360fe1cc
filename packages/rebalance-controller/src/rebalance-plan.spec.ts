import { parseCellSetSpec } from '@cellfed/api';
import { PlanHolder } from './rebalance-plan.ts';

const spec = parseCellSetSpec({
  cells: [
    { id: 'a', state: 'Normal', kubeconfigSecretRef: { name: 'a' } },
    { id: 'b', state: 'Joining', kubeconfigSecretRef: { name: 'b' } },
  ],
});

describe('PlanHolder', () => {
  it('tells its listeners of each new generation, once, with the gate closed', () => {
    const plans = new PlanHolder();
    let loads = 0;
    plans.onLoad(() => loads++);
    expect(plans.load(spec, 1)).toBe(true);
    expect(plans.load(spec, 1)).toBe(false);
    expect(loads).toBe(1);
    expect(plans.allowMoves(1)).toBe(true);
    expect(plans.load(spec, 2)).toBe(true);
    expect(loads).toBe(2);
    expect(plans.current()?.movesAllowed).toBe(false);
    expect(plans.allowMoves(1)).toBe(false);
  });
});
