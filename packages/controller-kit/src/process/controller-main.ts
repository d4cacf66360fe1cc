import { hostname } from 'node:os';

import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { Registry, collectDefaultMetrics } from 'prom-client';

import { CellPool } from '../cells/cell-pool.ts';
import { errorMessage } from '../errors.ts';
import { KubeClient } from '../kube/kube-client.ts';
import { createLogger } from '../log.ts';
import { createTracing, type TracingConfig } from '../tracing/tracing.ts';
import { wantsHelp } from './flags.ts';
import type { ManagerConfig } from './manager-config.ts';
import { Manager } from './manager.ts';

/** What every cellfed controller process reads from its command line (see `readControllerConfig`). */
export interface ControllerProcessConfig {
  kubeconfig?: string | undefined;
  cellSetName: string;
  secretNamespace: string;
  credentialsNamespace: string;
  manager: ManagerConfig;
  tracing: TracingConfig;
}

/** A controller's parts as its process runs them. */
export interface ControllerParts {
  /** For /readyz: true, or why not yet. */
  readyCheck(): true | string;
  /** Caches that run for the life of the process, so a replica that becomes leader starts warm. */
  runCaches(signal: AbortSignal): Promise<void>;
  /** The controllers, while leading. */
  runControllers(signal: AbortSignal): Promise<void>;
}

/**
 * The whole life of a controller process (`main.ts`): parse the command line (a bad one: one line and
 * exit 2), build the logger, an injected metrics registry, the control plane client and the cell pool, let
 * `build` wire the controller, run it under a Manager (caches always, controllers while leading), and exit
 * non-zero when leadership is lost or anything fails, with one readable line.
 */
export async function runControllerProcess<C extends ControllerProcessConfig>(options: {
  /** e.g. `backup-controller`: the log name, the user agent, the first word of every error line. */
  name: string;
  usage: string;
  parse: (argv: string[]) => C;
  build: (context: {
    config: C;
    controlPlane: KubeClient;
    pool: CellPool;
    logger: Logger;
    registry: Registry;
    /** A span per reconcile; records nothing unless `--otlp-endpoint` is given. */
    tracer: Tracer;
  }) => ControllerParts;
}): Promise<never> {
  const { name } = options;
  if (wantsHelp(process.argv.slice(2))) {
    process.stdout.write(`${options.usage}\n`);
    process.exit(0);
  }
  let config: C;
  try {
    config = options.parse(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${name}: ${errorMessage(error)}\n${options.usage}\n`);
    process.exit(2);
  }
  const logger = createLogger({ name, level: config.manager.logLevel });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const tracing = createTracing({
    serviceName: name,
    serviceInstance: `${hostname()}-${process.pid}`,
    config: config.tracing,
  });
  const { tracer } = tracing;
  let manager: Manager;
  try {
    const controlPlane = KubeClient.fromFile(config.kubeconfig, { userAgent: `cellfed-${name}` });
    const pool = new CellPool({
      controlPlane,
      logger,
      registry,
      cellSetName: config.cellSetName,
      credentialsNamespace: config.credentialsNamespace,
      tracer,
    });
    const parts = options.build({ config, controlPlane, pool, logger, registry, tracer });
    manager = new Manager({ name, config: config.manager, logger, registry, controlPlane });
    manager.addReadyCheck('caches', () => parts.readyCheck());
    manager.add((signal) => pool.run(signal), { needLeaderElection: false });
    manager.add((signal) => parts.runCaches(signal), { needLeaderElection: false });
    manager.add((signal) => parts.runControllers(signal), { needLeaderElection: true });
  } catch (error) {
    // A missing kubeconfig file: one readable line, not a stack.
    process.stderr.write(`${name}: ${errorMessage(error)}\n`);
    process.exit(1);
  }
  manager.installSignalHandlers();
  try {
    const { leadershipLost } = await manager.start();
    await flushed(tracing.shutdown(), logger);
    process.exit(leadershipLost ? 1 : 0);
  } catch (error) {
    logger.fatal({ err: errorMessage(error) }, `${name} failed`);
    await flushed(tracing.shutdown(), logger);
    process.exit(1);
  }
}

/** The last spans sent before the process exits; a collector that is down costs a warning, not the exit. */
async function flushed(shutdown: Promise<void>, logger: Logger): Promise<void> {
  await shutdown.catch((error: unknown) =>
    logger.warn({ err: errorMessage(error) }, 'could not send the last trace spans'),
  );
}
