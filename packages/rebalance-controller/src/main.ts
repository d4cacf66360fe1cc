/**
 * The rebalance controller process: cells join and leave live; objects move behind write fences, shared
 * objects are mirrored into every cell, progress is reported in `CellSet.status`.
 * `node src/main.ts [--kubeconfig FILE] [options]`. An app: nothing else imports it.
 */
import { runControllerProcess } from '@cellfed/controller-kit';

import { USAGE, parseRebalanceArgs } from './config.ts';
import { RebalanceController } from './rebalance-controller.ts';

await runControllerProcess({
  name: 'rebalance-controller',
  usage: USAGE,
  parse: parseRebalanceArgs,
  build: ({ config, controlPlane, pool, logger, registry, tracer }) =>
    new RebalanceController({
      controlPlane,
      pool,
      logger,
      registry,
      tracer,
      settings: config,
    }),
});
