import { parseCellSetSpec } from '@cellfed/api';

import { liveCells } from './cells.ts';

describe('liveCells', () => {
  it('keeps every cell but the Down ones, in the CellSet’s order', () => {
    const spec = parseCellSetSpec({
      cells: [
        { id: 'c', state: 'Normal', kubeconfigSecretRef: { name: 'c' } },
        { id: 'a', state: 'Down', kubeconfigSecretRef: { name: 'a' } },
        { id: 'b', state: 'Draining', kubeconfigSecretRef: { name: 'b' } },
        { id: 'd', state: 'Joining', kubeconfigSecretRef: { name: 'd' } },
      ],
    });
    expect(liveCells(spec)).toEqual(['c', 'b', 'd']);
  });
});
