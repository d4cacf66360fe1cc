import { renderStatus } from './status.ts';

const cellSet = (status?: unknown) => ({
  apiVersion: 'cells.cellfed.io/v1alpha1',
  kind: 'CellSet',
  metadata: { name: 'default' },
  spec: {
    cells: [
      { id: 'cell-1', state: 'Normal', kubeconfigSecretRef: { name: 'cell-1' } },
      { id: 'cell-2', state: 'Joining', weight: 2, kubeconfigSecretRef: { name: 'cell-2' } },
    ],
  },
  ...(status ? { status } : {}),
});

describe('renderStatus', () => {
  it('lists the cells with state, weight and objects, then the rebalance and what blocks it', () => {
    const text = renderStatus(
      cellSet({
        phase: 'Rebalancing',
        objects: { total: 100, toMove: 40, moved: 10, inFlight: 4 },
        cells: [{ id: 'cell-1', objects: 90 }],
        ratePerSecond: 5,
        etaSeconds: 6,
        conditions: [
          { type: 'Blocked', status: 'True', reason: 'RoutersBehind', message: 'router-a has generation 3' },
          { type: 'Valid', status: 'True' },
        ],
      }),
    );
    expect(text.split('\n')).toEqual([
      'CELL     STATE     WEIGHT   OBJECTS',
      'cell-1   Normal    1        90',
      'cell-2   Joining   2        -',
      '',
      'rebalance: Rebalancing',
      '  moved 10/40 (4 in flight), 5/s, about 6 s left',
      '  Blocked: RoutersBehind router-a has generation 3',
    ]);
  });

  it('says the phase is unknown before the controller has written a status', () => {
    expect(renderStatus(cellSet())).toContain('rebalance: unknown');
  });

  it('refuses an invalid CellSet with the field that is wrong', () => {
    expect(() => renderStatus({ ...cellSet(), spec: { cells: [] } })).toThrow(
      /the CellSet is invalid: .*cells/,
    );
  });
});
