import { parseCellSet } from '@cellfed/api';
import { cellSecret, cellSecretName, initialCellSet } from './cell-secrets.ts';

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
        kubeconfigSecretRef: { name: 'cell-1-kubeconfig', namespace: 'cellfed-system', key: 'kubeconfig' },
      },
      {
        id: 'cell-2',
        state: 'Normal',
        weight: 1,
        kubeconfigSecretRef: { name: 'cell-2-kubeconfig', namespace: 'cellfed-system', key: 'kubeconfig' },
      },
    ]);
  });

  it('rejects a cell id the CRD would reject, before anything is written', () => {
    expect(() => initialCellSet(['Cell_1'])).toThrow(/spec\.cells\[0\]\.id: "Cell_1" is not a valid cell id/);
  });

  it('stores the kubeconfig under the key the CellSet names', () => {
    const secret = cellSecret({ id: 'cell-1', kubeconfig: 'apiVersion: v1\n' });
    expect(secret.metadata).toMatchObject({ name: cellSecretName('cell-1'), namespace: 'cellfed-system' });
    expect(Buffer.from(secret.data.kubeconfig, 'base64').toString()).toBe('apiVersion: v1\n');
  });
});
