export {
  recentTrouble,
  startBackupController,
  startRebalanceController,
  stopController,
} from '../src/apps/controller-process.ts';
export { isRunning } from '../src/apps/node-app.ts';
export type { ControllerProcess } from '../src/apps/controller-process.ts';
