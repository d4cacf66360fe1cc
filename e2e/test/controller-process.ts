export {
  recentTrouble,
  startBackupController,
  startRebalanceController,
  stopController,
} from '@cellfed/cells/apps/controller-process.ts';
export { isRunning } from '@cellfed/cells/apps/node-app.ts';
export type { ControllerProcess } from '@cellfed/cells/apps/controller-process.ts';
