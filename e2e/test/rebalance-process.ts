export { startRebalanceController, stopRebalanceController } from '../src/apps/rebalance-process.ts';
export type { RebalanceProcess } from '../src/apps/rebalance-process.ts';
