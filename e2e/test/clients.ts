import { setTimeout as sleep } from 'node:timers/promises';

import { AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

import { cellSecretName } from '../src/control-plane/cell-secrets.ts';

/** client-node API clients for the apiserver a kubeconfig file names. */
export function clientsFor(kubeconfigFile: string) {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigFile);
  return {
    core: kubeConfig.makeApiClient(CoreV1Api),
    apps: kubeConfig.makeApiClient(AppsV1Api),
    custom: kubeConfig.makeApiClient(CustomObjectsApi),
  };
}

/** Polls `probe` until it returns a value; fails with `what` after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

const CELLSET_API = { group: 'cells.cellfed.io', version: 'v1alpha1', plural: 'cellsets' } as const;

/** The spec of a CellSet that is rebalancing: `normal` holds the objects, `joining` is being filled. */
export function joiningCellSetSpec(normal: string, joining: string) {
  return {
    cells: [
      { id: normal, state: 'Normal', kubeconfigSecretRef: { name: cellSecretName(normal) } },
      { id: joining, state: 'Joining', kubeconfigSecretRef: { name: cellSecretName(joining) } },
    ],
  };
}

/** Creates CellSet `name` with `spec` in the control plane a kubeconfig names. */
export async function createCellSet(kubeconfigFile: string, name: string, spec: unknown): Promise<void> {
  await clientsFor(kubeconfigFile).custom.createClusterCustomObject({
    ...CELLSET_API,
    body: { apiVersion: 'cells.cellfed.io/v1alpha1', kind: 'CellSet', metadata: { name }, spec },
  });
}

/** Deletes CellSet `name`; absent is fine (for afterAll). */
export async function deleteCellSet(kubeconfigFile: string, name: string): Promise<void> {
  await clientsFor(kubeconfigFile)
    .custom.deleteClusterCustomObject({ ...CELLSET_API, name })
    .catch(() => undefined);
}

/** CellSet `name` as stored. */
export async function readCellSet(kubeconfigFile: string, name: string): Promise<unknown> {
  return clientsFor(kubeconfigFile).custom.getClusterCustomObject({ ...CELLSET_API, name });
}
