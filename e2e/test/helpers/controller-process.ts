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
 * The rebalance controller with its window fixed at --window (`--fence-target 0`) unless the test sets a
 * target: the suites share two unpinned cores with every other process, where fences run past any target
 * (past 1 s too, in CI) whatever the number of moves at once, so the adaptive window would only make each
 * rebalance up to 4× slower (a suite then ran out of time). The window is measured pinned by the rebalance
 * benchmark, its rules by fence-window.spec.ts, and the chart's default target runs in the kind suite.
 * Namespaces are finalized (`--finalize-namespaces`) only where the test asks.
 */
export const startRebalanceController = (env: EnvFile, options: StartControllerOptions = {}) =>
  startRebalanceControllerWith(env, {
    ...options,
    args: [
      ...(options.args?.includes('--fence-target') ? [] : ['--fence-target', '0']),
      // Every controller finalizes every namespace of the shared control plane, and the finalizer outlives a
      // suite's controller: only the suite that shows it (governance) runs it.
      ...(options.args?.includes('--finalize-namespaces') ? [] : ['--finalize-namespaces', 'false']),
      ...(options.args ?? []),
    ],
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
