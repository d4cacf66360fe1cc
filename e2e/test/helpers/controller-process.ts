import {
  startQuotaController as startQuotaControllerWith,
  type QuotaControllerProcess,
} from '@cellfed/cells/apps/quota-controller-process.ts';
import { parseE2eConfig } from '@cellfed/cells/e2e-config.ts';
import type { EnvFile } from '@cellfed/cells/env-file.ts';

export {
  recentTrouble,
  startBackupController,
  startRebalanceController,
  stopController,
} from '@cellfed/cells/apps/controller-process.ts';
export { isRunning } from '@cellfed/cells/apps/node-app.ts';
export type { ControllerProcess } from '@cellfed/cells/apps/controller-process.ts';
export { stopQuotaController } from '@cellfed/cells/apps/quota-controller-process.ts';
export type { QuotaControllerProcess } from '@cellfed/cells/apps/quota-controller-process.ts';

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
