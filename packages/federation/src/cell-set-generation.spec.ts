import { parseCellSetSpec } from '@cellfed/api';

import { compileCellSet } from './cell-set-generation.ts';

describe('compileCellSet', () => {
  it('compiles a generation: its ring, its cellular resources by name and its live cells', () => {
    const spec = parseCellSetSpec({
      cellularResources: [
        { group: 'apps', version: 'v1', resource: 'deployments' },
        { group: '', version: 'v1', resource: 'configmaps' },
      ],
      cells: [
        { id: 'a', state: 'Normal', kubeconfigSecretRef: { name: 'a' } },
        { id: 'b', state: 'Down', kubeconfigSecretRef: { name: 'b' } },
      ],
    });
    const compiled = compileCellSet(spec, 7);
    expect(compiled.generation).toBe(7);
    expect(compiled.spec).toBe(spec);
    expect([...compiled.resources.keys()]).toEqual(['deployments.apps', 'configmaps']);
    expect(compiled.liveCells).toEqual(['a']);
    // Every key routes to the live cell by this generation's ring.
    expect(compiled.table.route(compiled.table.keyOf({ namespace: 'shop', name: 'web' })).oldCell).toBe('a');
  });
});
