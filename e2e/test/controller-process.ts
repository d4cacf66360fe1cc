export {
  recentTrouble,
  startBackupController,
  startRebalanceController,
  stopController,
} from '../src/apps/controller-process.ts';
export type { ControllerProcess } from '../src/apps/controller-process.ts';
