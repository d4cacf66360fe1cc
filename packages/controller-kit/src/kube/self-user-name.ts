import type { KubeClient } from './kube-client.ts';

/**
 * The user name an apiserver knows `client` by (a SelfSubjectReview, which any authenticated user may ask);
 * undefined when its answer names none.
 */
export async function selfUserName(
  client: Pick<KubeClient, 'request'>,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const review = await client.request<{ status?: { userInfo?: { username?: string } } }>(
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      ...(signal ? { signal } : {}),
    },
  );
  return review.status?.userInfo?.username || undefined;
}
