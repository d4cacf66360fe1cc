import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  RbacAuthorizationV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';

import { cellSecretName } from '@cellfed/cells/control-plane/cell-secrets.ts';
import type { EnvFile } from '@cellfed/cells/env-file.ts';
import type { KubeClient } from '@cellfed/controller-kit';
import { serviceAccountToken } from '@cellfed/cells/control-plane/service-account-token.ts';

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

/** Whether `user` may do what `attributes` say, as the apiserver `client` reaches decides (a SubjectAccessReview). */
export async function userMay(
  client: Pick<KubeClient, 'request'>,
  user: string,
  attributes: Readonly<Record<string, string>>,
): Promise<boolean> {
  const review = await client.request<{ status: { allowed: boolean } }>(
    'POST',
    '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user, resourceAttributes: attributes },
      },
    },
  );
  return review.status.allowed;
}

/**
 * An operator's kubeconfig, written to `file`: the control plane as the current context, and a context of
 * their own named after each cell (its admin here), as `kubectl cells backup` looks for them: the
 * environment's cells and any a test added (`cells`; without them a backup held there is out of reach).
 */
export function writeOperatorKubeconfig(
  env: EnvFile,
  file: string,
  cells: readonly { id: string; kubeconfig: string }[] = env.cells,
): string {
  const operator = new KubeConfig();
  operator.loadFromFile(env.controlPlane.kubeconfig);
  for (const cell of cells) {
    const own = new KubeConfig();
    own.loadFromFile(cell.kubeconfig);
    const context = own.getContextObject(own.getCurrentContext())!;
    operator.addCluster({ ...own.getCluster(context.cluster)!, name: `operator-${cell.id}` });
    operator.addUser({ ...own.getUser(context.user)!, name: `operator-${cell.id}` });
    operator.addContext({ name: cell.id, cluster: `operator-${cell.id}`, user: `operator-${cell.id}` });
  }
  writeFileSync(file, operator.exportConfig(), { mode: 0o600 });
  return file;
}

/** A new ServiceAccount `namespace/name` in the apiserver of `kubeconfigFile`, and a token for it (an hour). */
export async function newServiceAccountToken(
  kubeconfigFile: string,
  namespace: string,
  name: string,
): Promise<string> {
  await clientsFor(kubeconfigFile).core.createNamespacedServiceAccount({
    namespace,
    body: { metadata: { name } },
  });
  return serviceAccountToken(kubeconfigFile, namespace, name, 3600);
}

/**
 * A Role in `namespace` with `rules`, bound to a ServiceAccount of that namespace, in the apiserver of
 * `kubeconfigFile`: what the RBAC tests grant a caller.
 */
export async function grantRole(
  kubeconfigFile: string,
  namespace: string,
  role: { name: string; rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] },
  serviceAccount: string,
): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigFile);
  const rbac = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name: role.name }, rules: role.rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: serviceAccount },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.name },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
    },
  });
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

/** The spec of a CellSet with each cell in the given state, in the given order. */
export function cellSetSpec(states: Record<string, 'Normal' | 'Joining' | 'Draining' | 'Down'>) {
  return {
    cells: Object.entries(states).map(([id, state]) => ({
      id,
      state,
      kubeconfigSecretRef: { name: cellSecretName(id) },
    })),
  };
}

/** The spec of a CellSet that is rebalancing: `normal` holds the objects, `joining` is being filled. */
export function joiningCellSetSpec(normal: string, joining: string) {
  return cellSetSpec({ [normal]: 'Normal', [joining]: 'Joining' });
}

/** Creates CellSet `name` with `spec` in the control plane a kubeconfig names. */
export async function createCellSet(kubeconfigFile: string, name: string, spec: unknown): Promise<void> {
  await clientsFor(kubeconfigFile).custom.createClusterCustomObject({
    ...CELLSET_API,
    body: { apiVersion: 'cells.cellfed.io/v1alpha1', kind: 'CellSet', metadata: { name }, spec },
  });
}

/** Replaces the spec of CellSet `name` (a merge patch: `cells` is replaced whole). */
export async function updateCellSet(kubeconfigFile: string, name: string, spec: unknown): Promise<void> {
  await clientsFor(kubeconfigFile).custom.patchClusterCustomObject(
    { ...CELLSET_API, name, body: { spec } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** Runs `action` on every item, `concurrency` at a time; the first failure fails the whole. */
export async function forEachInParallel<T>(
  items: readonly T[],
  concurrency: number,
  action: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < items.length; i = next++) await action(items[i]!);
    }),
  );
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

/** Normal cells, the first weighing `weight` (changing from `previousWeight` when given, as `kubectl cells weight` writes it). */
export function weightedCellSetSpec(ids: readonly string[], weight: number, previousWeight?: number) {
  const spec = cellSetSpec(Object.fromEntries(ids.map((id) => [id, 'Normal' as const])));
  return {
    ...spec,
    cells: spec.cells.map((cell) =>
      cell.id === ids[0] ? { ...cell, weight, ...(previousWeight ? { previousWeight } : {}) } : cell,
    ),
  };
}

/** Whether the rebalance controller reports CellSet `name` Stable for its current generation. */
export async function cellSetSettled(kubeconfigFile: string, name: string): Promise<boolean> {
  const { metadata, status } = (await readCellSet(kubeconfigFile, name)) as {
    metadata: { generation?: number };
    status?: { observedGeneration?: number; phase?: string };
  };
  return status?.observedGeneration === metadata.generation && status?.phase === 'Stable';
}
