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
});
