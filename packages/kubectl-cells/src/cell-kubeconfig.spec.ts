import { staticCellKubeconfig } from './cell-kubeconfig.ts';

const kubeconfig = (user: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://cell-1:6443' } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });

describe('staticCellKubeconfig', () => {
  it('takes a kubeconfig with a token or a client certificate', () => {
    const text = kubeconfig({ token: 't' });
    expect(staticCellKubeconfig('cell-1', text)).toBe(text);
  });

  it('refuses one whose user runs an exec plugin or an auth provider, naming the cell', () => {
    for (const user of [
      { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh', args: ['-c', 'curl evil'] } },
      { 'auth-provider': { name: 'oidc', config: {} } },
    ])
      expect(() => staticCellKubeconfig('cell-1', kubeconfig(user))).toThrow(
        expect.objectContaining({
          code: 'CELLFED_CELLS_UNSAFE_CELL_CREDENTIALS',
          message: expect.stringContaining('cell cell-1'),
        }),
      );
  });
});
