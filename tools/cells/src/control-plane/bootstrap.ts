import { DEFAULT_SECRET_NAMESPACE } from '@cellfed/api';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import {
  ApiException,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  loadAllYaml,
  type KubernetesObject,
} from '@kubernetes/client-node';

import { E2eError, E2eErrorCode } from '../errors.ts';
import type { Logger } from '../log.ts';
import { CELL_COMPONENTS, credentialsNamespace } from '../chart/cell-identities.ts';
import { cellSecretName, cellSecrets, initialCellSet, type CellCredentials } from './cell-secrets.ts';

const FIELD_MANAGER = 'cellfed-cells';

export interface BootstrapOptions {
  /** Admin kubeconfig of the router control plane. */
  kubeconfigFile: string;
  cells: readonly CellCredentials[];
  /** Directory of CRD manifests (the chart's crds/). */
  crdDir: string;
  log: Logger;
  signal?: AbortSignal;
}

/**
 * Writes what the controllers read into the router control plane: the CRDs, the namespaces, a kubeconfig
 * Secret per cell and component and the CellSet `default`. Server-side apply, so running it again converges.
 */
export async function bootstrapControlPlane(options: BootstrapOptions): Promise<void> {
  const api = objectApi(options.kubeconfigFile);
  const apply = (object: KubernetesObject) => serverSideApply(api, object);

  const crds = readdirSync(options.crdDir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .flatMap((file) => loadAllYaml(readFileSync(join(options.crdDir, file), 'utf8')) as KubernetesObject[]);
  for (const crd of crds) await apply(crd);
  await Promise.all(crds.map((crd) => waitEstablished(api, crd.metadata?.name ?? '', options)));

  for (const name of [DEFAULT_SECRET_NAMESPACE, ...CELL_COMPONENTS.map(credentialsNamespace)])
    await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  for (const cell of options.cells) for (const secret of cellSecrets(cell)) await apply(secret);
  const cellSet = initialCellSet(options.cells.map((cell) => cell.id));
  await retryWhileUndiscovered(() => apply(cellSet as KubernetesObject), options);
  options.log.info(
    { cell: 'control-plane', cellSet: cellSet.metadata.name, cells: options.cells.map((cell) => cell.id) },
    'control plane bootstrapped: CRDs, cell Secrets and CellSet applied',
  );
}

/** Puts one cell's kubeconfig Secrets in the control plane (a cell added to a running environment). */
export async function applyCellSecret(kubeconfigFile: string, cell: CellCredentials): Promise<void> {
  for (const secret of cellSecrets(cell)) await serverSideApply(objectApi(kubeconfigFile), secret);
}

/** Deletes a cell's kubeconfig Secrets from the control plane; one already gone is not an error. */
export async function deleteCellSecret(kubeconfigFile: string, cellId: string): Promise<void> {
  for (const component of CELL_COMPONENTS) {
    try {
      await objectApi(kubeconfigFile).delete({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: cellSecretName(cellId), namespace: credentialsNamespace(component) },
      });
    } catch (error) {
      if (!(error instanceof ApiException && error.code === 404)) throw error;
    }
  }
}

/**
 * Applies `objects` (a chart's RBAC, rendered) in order with server-side apply; a namespaced object's
 * namespace is created first if it is missing.
 */
export async function applyObjects(
  kubeconfigFile: string,
  objects: readonly KubernetesObject[],
): Promise<void> {
  const api = objectApi(kubeconfigFile);
  const namespaces = new Set(objects.map((object) => object.metadata?.namespace).filter(Boolean));
  for (const name of namespaces)
    await serverSideApply(api, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  for (const object of objects) await serverSideApply(api, object);
}

/** Applies `object` as this tool's field manager, taking over fields others set (it owns what it writes). */
function serverSideApply(api: KubernetesObjectApi, object: KubernetesObject) {
  return api.patch(object, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
}

function objectApi(kubeconfigFile: string): KubernetesObjectApi {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigFile);
  return KubernetesObjectApi.makeApiClient(kubeConfig);
}

async function waitEstablished(
  api: KubernetesObjectApi,
  name: string,
  options: BootstrapOptions,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    options.signal?.throwIfAborted();
    const crd = await api.read<
      KubernetesObject & { status?: { conditions?: { type: string; status: string }[] } }
    >({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name },
    });
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline) {
      throw new E2eError(E2eErrorCode.NotReady, `CRD ${name} not Established after 30 s`);
    }
    await sleep(100, undefined, { signal: options.signal });
  }
}

/** A CRD just Established may take a moment to appear in discovery, which the object API resolves kinds by. */
async function retryWhileUndiscovered<T>(action: () => Promise<T>, options: BootstrapOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (error) {
      const notFound = error instanceof ApiException && error.code === 404;
      const unknownKind = error instanceof Error && /Unrecognized API version and kind/i.test(error.message);
      if (!(notFound || unknownKind) || attempt >= 50) throw error;
      await sleep(100, undefined, { signal: options.signal });
    }
  }
}
