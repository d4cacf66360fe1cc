import {
  startQuotaController as startQuotaControllerWith,
  type QuotaControllerProcess,
} from '@cellfed/cells/apps/quota-controller-process.ts';
import { parseE2eConfig } from '@cellfed/cells/e2e-config.ts';
import type { EnvFile } from '@cellfed/cells/env-file.ts';

import {
  startRebalanceController as startRebalanceControllerWith,
  type StartControllerOptions,
} from '@cellfed/cells/apps/controller-process.ts';

export {
  recentTrouble,
  startBackupController,
  stopController,
} from '@cellfed/cells/apps/controller-process.ts';
export { isRunning } from '@cellfed/cells/apps/node-app.ts';
export type { ControllerProcess } from '@cellfed/cells/apps/controller-process.ts';
export { stopQuotaController } from '@cellfed/cells/apps/quota-controller-process.ts';
export type { QuotaControllerProcess } from '@cellfed/cells/apps/quota-controller-process.ts';

/**
 * The rebalance controller, with a fence target of 1 s unless the test sets its own: the suites share two
 * unpinned cores with every other process, where fences run far past a production target whatever the
 * number of moves at once, and the adaptive window would only make each rebalance slower. The window is
 * measured pinned by the rebalance benchmark, and its rules by fence-window.spec.ts.
 */
export const startRebalanceController = (env: EnvFile, options: StartControllerOptions = {}) =>
  startRebalanceControllerWith(env, {
    ...options,
    args: options.args?.includes('--fence-target')
      ? options.args
      : ['--fence-target', '1s', ...(options.args ?? [])],
  });

/** The quota controller (kube-controller-manager's, from the suite's tools) counting through `routerUrl`. */
export const startQuotaController = (
  env: EnvFile,
  routerUrl: string,
  logFile: string,
): Promise<QuotaControllerProcess> =>
  startQuotaControllerWith(env, routerUrl, {
    toolsDir: parseE2eConfig(process.env, env.dir).toolsDir,
    logFile,
  });
