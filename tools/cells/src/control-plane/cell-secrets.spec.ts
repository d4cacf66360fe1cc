import { parseCellSet } from '@cellfed/api';
import { cellSecretName, cellSecrets, initialCellSet } from './cell-secrets.ts';

describe('control-plane objects', () => {
  it('lists every cell as Normal with weight 1, each pointing at its Secret, and passes the schema', () => {
    const cellSet = initialCellSet(['cell-1', 'cell-2']);
    expect(parseCellSet(cellSet)).toEqual(cellSet);
    expect(cellSet.metadata.name).toBe('default');
    expect(cellSet.spec.cells).toEqual([
      {
        id: 'cell-1',
        state: 'Normal',
        weight: 1,
        kubeconfigSecretRef: { name: 'cell-1-kubeconfig', key: 'kubeconfig' },
      },
      {
        id: 'cell-2',
        state: 'Normal',
        weight: 1,
        kubeconfigSecretRef: { name: 'cell-2-kubeconfig', key: 'kubeconfig' },
      },
    ]);
  });

  it('rejects a cell id the CRD would reject, before anything is written', () => {
    expect(() => initialCellSet(['Cell_1'])).toThrow(/spec\.cells\[0\]\.id: "Cell_1" is not a valid cell id/);
  });

  it('stores each component’s kubeconfig under the name the CellSet names, in that component’s own namespace', () => {
    const secrets = cellSecrets({
      id: 'cell-1',
      kubeconfigs: { router: 'r\n', 'rebalance-controller': 'm\n', 'backup-controller': 'b\n' },
    });
    expect(
      secrets.map((secret) => [
        secret.metadata.namespace,
        secret.metadata.name,
        Buffer.from(secret.data.kubeconfig, 'base64').toString(),
      ]),
    ).toEqual([
      ['cellfed-router-cells', cellSecretName('cell-1'), 'r\n'],
      ['cellfed-rebalance-controller-cells', cellSecretName('cell-1'), 'm\n'],
      ['cellfed-backup-controller-cells', cellSecretName('cell-1'), 'b\n'],
    ]);
  });
});
