/**
 * The backup controller process: an inert copy of every cellular object in the next cell clockwise,
 * promoted to the real object when the object's cell is marked Down.
 * `node src/main.ts [--kubeconfig FILE] [options]`. An app: nothing else imports it.
 */
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
      settings: config,
    }),
});
