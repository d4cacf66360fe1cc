import type { KubeClient, KubeList, KubeObject } from '@cellfed/controller-kit';

export const DEPLOYMENTS = '/apis/apps/v1';
export const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

/** A Deployment of no replicas (nothing to schedule: the suites test the control plane). */
export const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'web', image: 'nginx' }] },
    },
  },
});

/** The Deployments of `namespace` in one apiserver (or through the router): name → metadata. */
export async function deploymentsIn(
  client: KubeClient,
  namespace: string,
): Promise<Map<string, KubeObject['metadata']>> {
  const list = await client.request<KubeList>('GET', `${DEPLOYMENTS}/namespaces/${namespace}/deployments`, {
    accept: METADATA_LIST,
  });
  return new Map((list.items ?? []).map((item) => [item.metadata.name!, item.metadata]));
}
