// The backup controller process: `node src/main.ts [--kubeconfig FILE] [options]`.
import { CellPool, KubeClient, Manager, createLogger, errorMessage } from '@cellfed/controller-kit';
import { Registry, collectDefaultMetrics } from 'prom-client';

import { BackupController } from './backup-controller.ts';
import { USAGE, parseBackupArgs, type BackupConfig } from './config.ts';

let config: BackupConfig;
try {
  config = parseBackupArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`backup-controller: ${errorMessage(error)}\n${USAGE}\n`);
  process.exit(2);
}

const logger = createLogger({ name: 'backup-controller', level: config.manager.logLevel });
const registry = new Registry();
collectDefaultMetrics({ register: registry });
let manager: Manager;
try {
  const controlPlane = KubeClient.fromFile(config.kubeconfig, { userAgent: 'cellfed-backup-controller' });
  const pool = new CellPool({
    controlPlane,
    logger,
    registry,
    cellSetName: config.cellSetName,
    secretNamespace: config.secretNamespace,
  });
  const controller = new BackupController({
    controlPlane,
    pool,
    logger,
    registry,
    settings: {
      workers: config.workers,
      resyncMs: config.resyncMs,
      resyncQps: config.resyncQps,
      ...(config.autoDownAfterMs === undefined ? {} : { autoDownAfterMs: config.autoDownAfterMs }),
    },
  });
  manager = new Manager({
    name: 'backup-controller',
    config: config.manager,
    logger,
    registry,
    controlPlane,
  });
  manager.addReadyCheck('caches', () => controller.readyCheck());
  manager.add((signal) => pool.run(signal), { needLeaderElection: false });
  manager.add((signal) => controller.runCaches(signal), { needLeaderElection: false });
  manager.add((signal) => controller.runControllers(signal), { needLeaderElection: true });
} catch (error) {
  // A missing kubeconfig file: one readable line, not a stack.
  process.stderr.write(`backup-controller: ${errorMessage(error)}\n`);
  process.exit(1);
}
manager.installSignalHandlers();
try {
  const { leadershipLost } = await manager.start();
  process.exit(leadershipLost ? 1 : 0);
} catch (error) {
  logger.fatal({ err: errorMessage(error) }, 'backup controller failed');
  process.exit(1);
}
