import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

/**
 * A token of ServiceAccount `namespace/name` (a TokenRequest, asked with the credentials of
 * `kubeconfigFile`), good for `expirationSeconds`: what the components and the tests' callers use as that
 * ServiceAccount. The ServiceAccount must exist.
 */
export async function serviceAccountToken(
  kubeconfigFile: string,
  namespace: string,
  name: string,
  expirationSeconds: number,
): Promise<string> {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigFile);
  const issued = await config.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds } },
  });
  return issued.status!.token!;
}
