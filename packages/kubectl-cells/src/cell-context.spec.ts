import { KubeConfig } from '@kubernetes/client-node';

import { cellKubeConfig } from './cell-context.ts';
import { CellsCliErrorCode } from './errors.ts';

const operator = () => {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      { name: 'router', server: 'https://router:6443' },
      { name: 'cell-2', server: 'https://cell-2:6443' },
      { name: 'east', server: 'https://east:6443' },
    ],
    users: [{ name: 'me', token: 'mine' }],
    contexts: [
      { name: 'router', cluster: 'router', user: 'me' },
      { name: 'cell-2', cluster: 'cell-2', user: 'me' },
      { name: 'ops@east', cluster: 'east', user: 'me' },
    ],
    currentContext: 'router',
  });
  return config;
};

describe('cellKubeConfig', () => {
  it('reaches a cell through the context named as it, else the one --cell-context names', () => {
    const config = operator();
    expect(cellKubeConfig(config, 'cell-2', {}).getCurrentCluster()?.server).toBe('https://cell-2:6443');
    expect(cellKubeConfig(config, 'cell-3', { 'cell-3': 'ops@east' }).getCurrentCluster()?.server).toBe(
      'https://east:6443',
    );
    expect(cellKubeConfig(config, 'cell-2', {}).getCurrentUser()?.token).toBe('mine');
    // The operator's own kubeconfig keeps its current context.
    expect(config.getCurrentContext()).toBe('router');
  });

  it.each([
    [
      {},
      'cell 3: your kubeconfig has no context named 3; name the one that reaches the cell with --cell-context 3=CONTEXT',
    ],
    [{ '3': 'gone' }, 'cell 3: your kubeconfig has no context "gone" (--cell-context 3=gone)'],
  ])('refuses a cell it has no way into (%j) in one line', (named, message) => {
    expect(() => cellKubeConfig(operator(), '3', named)).toThrow(message);
    expect(() => cellKubeConfig(operator(), '3', named)).toThrow(
      expect.objectContaining({ code: CellsCliErrorCode.NoCellContext }) as Error,
    );
  });
});
