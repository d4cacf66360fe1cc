// The backup controller process: `node src/main.ts [--kubeconfig FILE] [options]`.
import { runControllerProcess } from '@cellfed/controller-kit';

import { BackupController } from './backup-controller.ts';
import { USAGE, parseBackupArgs } from './config.ts';

await runControllerProcess({
  name: 'backup-controller',
  usage: USAGE,
  parse: parseBackupArgs,
  build: ({ config, controlPlane, pool, logger, registry, tracer }) =>
    new BackupController({
      controlPlane,
      pool,
      logger,
      registry,
      tracer,
      settings: {
        workers: config.workers,
        resyncMs: config.resyncMs,
        resyncQps: config.resyncQps,
        ...(config.autoDownAfterMs === undefined ? {} : { autoDownAfterMs: config.autoDownAfterMs }),
      },
    }),
});
