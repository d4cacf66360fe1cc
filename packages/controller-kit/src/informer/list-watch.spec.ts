import type { KubeClient } from '../kube/kube-client.ts';
import { resourceListWatch } from './list-watch.ts';

describe('resourceListWatch', () => {
  it('reads an empty PartialObjectMetadataList (items: null) as no items', async () => {
    const client = {
      request: async () => ({ metadata: { resourceVersion: '5' }, items: null }),
    } as unknown as KubeClient;
    const source = resourceListWatch(
      client,
      { group: 'apps', version: 'v1', resource: 'jobs', namespaced: true },
      { metadataOnly: true },
    );
    const page = await source.list({ limit: 10, signal: new AbortController().signal });
    expect(page).toEqual({ resourceVersion: '5', items: [] });
  });

  it('gives every item of a list the apiVersion and kind the list names once', async () => {
    const client = {
      request: async () => ({
        apiVersion: 'apps/v1',
        kind: 'DeploymentList',
        metadata: { resourceVersion: '5' },
        items: [
          { metadata: { name: 'a' } },
          { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'b' } },
        ],
      }),
    } as unknown as KubeClient;
    const source = resourceListWatch(client, {
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      namespaced: true,
    });
    const page = await source.list({ limit: 10, signal: new AbortController().signal });
    expect(page.items.map((item) => [item.apiVersion, item.kind])).toEqual([
      ['apps/v1', 'Deployment'],
      ['apps/v1', 'Deployment'],
    ]);
  });
});
