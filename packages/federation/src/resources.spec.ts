import { resourcePath } from './resource-path.ts';
import * as resources from './resources.ts';

describe('resource descriptors', () => {
  it('each name a distinct resource, with the paths an apiserver serves them at', () => {
    const all = Object.values(resources);
    expect(new Set(all.map((one) => `${one.group}/${one.resource}`)).size).toBe(all.length);
    expect(resourcePath(resources.NAMESPACES, 'ignored', 'shop')).toBe('/api/v1/namespaces/shop');
    expect(resourcePath(resources.SECRETS, 'shop', 'db')).toBe('/api/v1/namespaces/shop/secrets/db');
    expect(resourcePath(resources.LEASES, 'cellfed-system')).toBe(
      '/apis/coordination.k8s.io/v1/namespaces/cellfed-system/leases',
    );
    expect(resourcePath(resources.CRDS, undefined, 'cellsets.cells.cellfed.io')).toBe(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/cellsets.cells.cellfed.io',
    );
  });
});
