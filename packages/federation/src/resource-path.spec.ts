import { resourceId, resourcePath } from './resource-path.ts';

const deployments = { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true };
const configmaps = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
const cellsets = { group: 'cells.cellfed.io', version: 'v1alpha1', resource: 'cellsets', namespaced: false };

describe('resourcePath', () => {
  it('builds collection and object paths for groups and the core API', () => {
    expect(resourcePath(deployments)).toBe('/apis/apps/v1/deployments');
    expect(resourcePath(deployments, 'team-a')).toBe('/apis/apps/v1/namespaces/team-a/deployments');
    expect(resourcePath(deployments, 'team-a', 'web')).toBe(
      '/apis/apps/v1/namespaces/team-a/deployments/web',
    );
    expect(resourcePath(configmaps, 'default', 'cfg')).toBe('/api/v1/namespaces/default/configmaps/cfg');
  });

  it('ignores a namespace for cluster-scoped resources', () => {
    expect(resourcePath(cellsets, 'ignored', 'default')).toBe(
      '/apis/cells.cellfed.io/v1alpha1/cellsets/default',
    );
  });

  it('names resources for logs', () => {
    expect(resourceId(deployments)).toBe('apps/v1/deployments');
    expect(resourceId(configmaps)).toBe('v1/configmaps');
  });
});
