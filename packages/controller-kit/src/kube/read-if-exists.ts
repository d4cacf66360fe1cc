import { isNotFound } from './api-error.ts';
import type { KubeClient, RequestOptions } from './kube-client.ts';

/** A GET of one object (or any single resource); undefined when the apiserver answers 404. */
export async function readIfExists<T>(
  client: Pick<KubeClient, 'request'>,
  path: string,
  options: RequestOptions = {},
): Promise<T | undefined> {
  try {
    return await client.request<T>('GET', path, options);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
