/**
 * The cell router process, the Kubernetes API front door of a cellfed federation: every request is parsed
 * (request/), planned without I/O (routing/), then carried out (proxy/, collections/).
 * `node src/main.ts --tls-cert-file … --tls-key-file … [--kubeconfig …]`. An app: nothing else imports it.
 */
import { readFileSync } from 'node:fs';

import {
  KubeClient,
  Manager,
  createLogger,
  createTracing,
  errorMessage,
  untilAborted,
  wantsHelp,
} from '@cellfed/controller-kit';
import { Registry, collectDefaultMetrics } from 'prom-client';

import { USAGE, parseRouterArgs, type RouterConfig } from './config.ts';
import { Router } from './server/router.ts';
import { followTlsSecret, readTlsSecret, type ServingCertificate } from './server/serving-certificate.ts';

if (wantsHelp(process.argv.slice(2))) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
let config: RouterConfig;
try {
  config = parseRouterArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`cell-router: ${errorMessage(error)}\n${USAGE}\n`);
  process.exit(2);
}

const logger = createLogger({ name: 'cell-router', level: config.manager.logLevel });
const registry = new Registry();
collectDefaultMetrics({ register: registry });
const tracing = createTracing({
  serviceName: 'cell-router',
  serviceInstance: config.replicaId,
  config: config.tracing,
});
let manager: Manager;
try {
  const controlPlane = KubeClient.fromFile(config.kubeconfig, { userAgent: 'cellfed-cell-router' });
  const tlsSecret = config.tlsSecret;
  const serving: ServingCertificate = tlsSecret
    ? await readTlsSecret(controlPlane, tlsSecret)
    : { cert: readFileSync(config.tlsCertFile!, 'utf8'), key: readFileSync(config.tlsKeyFile!, 'utf8') };
  const router = new Router({
    controlPlane,
    logger,
    registry,
    tracer: tracing.tracer,
    tls: {
      ...serving,
      ...(config.clientCaFile ? { clientCa: readFileSync(config.clientCaFile) } : {}),
    },
    cellSetName: config.cellSetName,
    secretNamespace: config.secretNamespace,
    ...(config.credentialsNamespace ? { credentialsNamespace: config.credentialsNamespace } : {}),
    identity: config.replicaId,
    componentCellUsers: [
      config.routerCellUser,
      config.rebalanceControllerCellUser,
      config.backupControllerCellUser,
    ].filter((user) => user !== undefined),
    ...(config.routerCellUser ? { routerCellUser: config.routerCellUser } : {}),
    limits: {
      maxRequestsInFlight: config.maxRequestsInFlightPerCaller,
      maxLongRunning: config.maxLongRunningPerCaller,
      maxLongRunningTotal: config.maxLongRunning,
    },
    bodies: { totalBytes: config.maxBodyBytesInFlight, perCallerBytes: config.maxBodyBytesPerCaller },
    watchBytes: config.maxWatchBytesHeld,
    maxConnections: config.maxConnections,
  });
  manager = new Manager({ name: 'cell-router', config: config.manager, logger, registry, controlPlane });
  manager.addReadyCheck('routing', () => router.readyCheck());
  if (tlsSecret) {
    manager.add(
      (signal) =>
        followTlsSecret({
          client: controlPlane,
          ref: tlsSecret,
          current: serving,
          apply: (certificate) => router.updateServingCertificate(certificate),
          signal,
          logger,
        }),
      { needLeaderElection: false },
    );
  }
  manager.add(
    async (signal) => {
      const address = await router.listen(config.host, config.port, signal);
      logger.info(
        { address: `${address.address}:${address.port}`, port: address.port },
        'serving the Kubernetes API',
      );
      await untilAborted(signal);
      await router.stopped();
    },
    { needLeaderElection: false },
  );
} catch (error) {
  // A missing kubeconfig or certificate file: one readable line, not a stack.
  process.stderr.write(`cell-router: ${errorMessage(error)}\n`);
  process.exit(1);
}
manager.installSignalHandlers();
try {
  await manager.start();
  await tracing.shutdown().catch(() => undefined);
  process.exit(0);
} catch (error) {
  logger.fatal({ err: errorMessage(error) }, 'router failed');
  await tracing.shutdown().catch(() => undefined);
  process.exit(1);
}
