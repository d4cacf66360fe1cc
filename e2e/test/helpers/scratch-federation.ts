import { join } from 'node:path';

import { KubeClient, isNotFound } from '@cellfed/controller-kit';

import type { EnvFile } from '@cellfed/cells/env-file.ts';
import { createCellSet, deleteCellSet, eventually, forEachInParallel } from './clients.ts';
import { DEPLOYMENTS, deployment } from './deployments.ts';
import {
  startQuotaController,
  startRebalanceController,
  stopController,
  stopQuotaController,
  type ControllerProcess,
  type QuotaControllerProcess,
} from './controller-process.ts';
import { routerKubeconfig, startRouter, stopRouter, type RouterProcess } from './router-process.ts';

/**
 * A federation of a suite's own on the environment's cells: its own CellSet, a router on it, and a namespace
 * of Deployments created through that router. Suites that move or fail over objects use one each, so that
 * they never disturb the shared CellSet.
 */
export interface ScratchFederation {
  readonly router: RouterProcess;
  /** The router, as the control plane's admin. */
  readonly routed: KubeClient;
}

export interface ScratchFederationOptions {
  cellSetName: string;
  spec: unknown;
  namespace: string;
  /** Deployments created through the router, 16 at a time. */
  deployments: readonly string[];
  /** The cells the router may reach; all of the environment's by default. */
  cells?: string[];
}

export async function startScratchFederation(
  env: EnvFile,
  options: ScratchFederationOptions,
): Promise<ScratchFederation> {
  const { cellSetName, namespace } = options;
  await createCellSet(env.controlPlane.kubeconfig, cellSetName, options.spec);
  const router = await startRouter(env, {
    args: ['--cellset', cellSetName],
    ...(options.cells ? { cells: options.cells } : {}),
    logFile: join(env.dir, `${cellSetName}-router.log`),
  });
  const routed = KubeClient.fromFile(
    routerKubeconfig(env, router, join(env.dir, `${cellSetName}.kubeconfig`)),
  );
  try {
    await routed.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    });
    await forEachInParallel(options.deployments, 16, (name) =>
      routed.request('POST', `${DEPLOYMENTS}/namespaces/${namespace}/deployments`, {
        body: deployment(name),
      }),
    );
  } catch (error) {
    await routed.close();
    await stopRouter(router);
    throw error;
  }
  return { router, routed };
}

/**
 * Undoes {@link startScratchFederation}, also after one that failed half-way: the router stopped, the CellSet
 * deleted, and the namespace deleted in the control plane and in every cell. It waits until each cell's
 * namespace is gone, so that a suite's objects (thousands in the proofs) do not weigh on the next suite's
 * cells.
 */
export async function stopScratchFederation(
  env: EnvFile,
  federation: ScratchFederation | undefined,
  options: Pick<ScratchFederationOptions, 'cellSetName' | 'namespace'>,
): Promise<void> {
  await stopRouter(federation?.router);
  await federation?.routed.close();
  await deleteCellSet(env.controlPlane.kubeconfig, options.cellSetName);
  const path = `/api/v1/namespaces/${options.namespace}`;
  const controlPlane = KubeClient.fromFile(env.controlPlane.kubeconfig);
  await controlPlane.request('DELETE', path).catch(() => undefined);
  await controlPlane.close();
  await Promise.all(
    env.cells.map(async (cell) => {
      const client = KubeClient.fromFile(cell.kubeconfig);
      try {
        await client.request('DELETE', path).catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
        // The cell's namespace controller (kube-controller-manager) empties it first.
        await eventually(
          `namespace ${options.namespace} to be gone from ${cell.id}`,
          () =>
            client.request('GET', path).then(
              () => undefined,
              (error: unknown) => {
                if (isNotFound(error)) return true;
                throw error;
              },
            ),
          300_000,
        );
      } finally {
        await client.close();
      }
    }),
  );
}

/**
 * A scratch federation and the rebalance controller of its CellSet (one replica, no leader election), and
 * when asked the quota controller (kube-controller-manager's, through its router) that counts its quotas.
 */
export interface RebalancedFederation {
  readonly federation: ScratchFederation;
  readonly controller: ControllerProcess;
  readonly quotaController?: QuotaControllerProcess;
}

/**
 * {@link startScratchFederation} with a rebalance controller on its CellSet, started once the federation is
 * up and engaged with `options.cells`; `controllerArgs` are its further flags.
 */
export async function startRebalancedFederation(
  env: EnvFile,
  options: ScratchFederationOptions & { cells: string[]; quotaController?: boolean },
  controllerArgs: string[] = [],
): Promise<RebalancedFederation> {
  const federation = await startScratchFederation(env, options);
  let controller: ControllerProcess | undefined;
  try {
    controller = await startRebalanceController(env, {
      args: ['--cellset', options.cellSetName, '--leader-elect', 'false', ...controllerArgs],
      cells: options.cells,
      logFile: join(env.dir, `${options.cellSetName}-controller.log`),
    });
    const quotaController = options.quotaController
      ? await startQuotaController(
          env,
          federation.router.url,
          join(env.dir, `${options.cellSetName}-quota-controller.log`),
        )
      : undefined;
    return { federation, controller, ...(quotaController ? { quotaController } : {}) };
  } catch (error) {
    await stopController(controller);
    await stopScratchFederation(env, federation, options);
    throw error;
  }
}

/** Undoes {@link startRebalancedFederation}: the controllers, then the federation. */
export async function stopRebalancedFederation(
  env: EnvFile,
  started: Partial<RebalancedFederation> | undefined,
  options: Pick<ScratchFederationOptions, 'cellSetName' | 'namespace'>,
): Promise<void> {
  await stopQuotaController(started?.quotaController);
  await stopController(started?.controller);
  await stopScratchFederation(env, started?.federation, options);
}
