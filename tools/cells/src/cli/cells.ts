#!/usr/bin/env node
// `npm run cells -- up|down|status|run`: real cells for development and the e2e suite. scripts/cells.sh
// builds the tools first and passes their directory in CELLFED_TOOLS_BIN.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { E2eError, E2eErrorCode } from '../errors.ts';
import { createLogger } from '../log.ts';
import { envFilePath, readEnvFile, type ProviderName } from '../env-file.ts';
import { startBackupController, startRebalanceController } from '../apps/controller-process.ts';
import { stopApp } from '../apps/node-app.ts';
import { startQuotaController } from '../apps/quota-controller-process.ts';
import { CHART_CRD_DIR } from '../paths.ts';
import type { Provider } from '../provider.ts';
import { createProvider } from '../providers.ts';
import { startRouter, writeRouterKubeconfig } from '../router/router-process.ts';
import { parseCellsArgs } from './cells-args.ts';
import { printStatus } from './cells-status.ts';

/** The provider of the environment in `dir`; undefined where there is none (down of nothing is not an error). */
function providerOf(dir: string): ProviderName | undefined {
  return existsSync(envFilePath(resolve(dir))) ? readEnvFile(dir).provider : undefined;
}

async function main(): Promise<number> {
  const args = parseCellsArgs(process.argv.slice(2), process.env);
  const log = createLogger({ level: args.logLevel });
  if (args.command === 'status') {
    printStatus(args.dir);
    return 0;
  }
  // After `up`, an environment's commands go to the provider that made it (env.json says which).
  const made = args.command === 'up' || args.command === 'run' ? undefined : providerOf(args.dir);
  const provider = createProvider(made ?? args.provider, {
    toolsDir: args.tools,
    crdDir: CHART_CRD_DIR,
    runtimeRoot: args.runtimeRoot,
    nodeImage: args.nodeImage,
  });
  if (args.command === 'down') {
    await provider.down({ dir: args.dir, log });
    return 0;
  }
  if (args.command === 'add-cell' || args.command === 'remove-cell' || args.command === 'kill-cell') {
    if (!provider.addCell || !provider.removeCell || !provider.killCell) {
      throw new E2eError(
        E2eErrorCode.InvalidArguments,
        `${args.command} is not supported by ${provider.name}`,
      );
    }
    if (args.command === 'kill-cell') {
      await provider.killCell({ dir: args.dir, id: args.cell!, log });
      process.stdout.write(`${args.cell!}: kube-apiserver and etcd killed\n`);
      return 0;
    }
    if (args.command === 'remove-cell') {
      await provider.removeCell({ dir: args.dir, id: args.cell!, log });
      return 0;
    }
    const cell = await provider.addCell({ dir: args.dir, controllerManager: args.controllerManager, log });
    process.stdout.write(`${cell.id}\n`);
    return 0;
  }
  // Ctrl-C or SIGTERM during `up` stops what was started; once `up` has returned, the cells keep running.
  const interrupt = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => interrupt.abort(new Error(`received ${signal}`));
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    await provider.up({
      dir: args.dir,
      cells: args.cells,
      controllerManager: args.controllerManager,
      images: args.images,
      log,
      signal: interrupt.signal,
    });
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
  if (args.command === 'up') {
    process.stdout.write(`${args.dir}/env.json\n`);
    return 0;
  }
  return runFederation(provider, args.dir, args.routerPort, args.tools, log);
}

const KUBECTL_CELLS = fileURLToPath(
  new URL('../../../../packages/kubectl-cells/dist/kubectl-cells.mjs', import.meta.url),
);

/**
 * `DIR/bin`: kubectl (built with the cells), the `kubectl cells` plugin and the Node.js 24 it runs on, so one
 * PATH entry gives a shell everything the guided tour uses.
 */
function linkTools(dir: string, tools: string | undefined): string {
  const bin = resolve(dir, 'bin');
  rmSync(bin, { recursive: true, force: true });
  mkdirSync(bin, { recursive: true });
  if (tools) symlinkSync(join(tools, 'kubectl'), join(bin, 'kubectl'));
  symlinkSync(KUBECTL_CELLS, join(bin, 'kubectl-cells'));
  symlinkSync(process.execPath, join(bin, 'node'));
  return bin;
}

/**
 * `run`: the cells just started, the router in front of them and both controllers behind, and a kubeconfig
 * for the router; in the foreground until Ctrl-C (or SIGTERM, or a component ending), which stops the
 * controllers, the router and then every cell.
 */
async function runFederation(
  provider: Provider,
  dir: string,
  port: number,
  tools: string | undefined,
  log: ReturnType<typeof createLogger>,
): Promise<number> {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => stop.abort(new Error(`received ${signal}`));
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const running: { name: string; child: ChildProcess }[] = [];
  try {
    const env = readEnvFile(dir);
    const logs = resolve(dir, 'logs');
    log.info({ port }, 'starting the cell router');
    // It runs for as long as the user likes: only the latest log lines stay in memory (all are in the files).
    const keepLines = 1000;
    const router = await startRouter(env, { port, logFile: join(logs, 'cell-router.log'), keepLines });
    running.push({ name: 'the cell router', child: router.child });
    log.info('starting the rebalance, backup and quota controllers');
    const controllers = await Promise.all([
      startRebalanceController(env, { logFile: join(logs, 'rebalance-controller.log'), keepLines }),
      startBackupController(env, { logFile: join(logs, 'backup-controller.log'), keepLines }),
      startQuotaController(env, router.url, { toolsDir: tools, logFile: join(logs, 'quota-controller.log') }),
    ]);
    running.push(
      { name: 'the rebalance controller', child: controllers[0].child },
      { name: 'the backup controller', child: controllers[1].child },
      { name: 'the quota controller', child: controllers[2].child },
    );
    const kubeconfig = writeRouterKubeconfig(
      env,
      router.url,
      resolve(dir, 'kubeconfig', 'router.kubeconfig'),
    );
    const bin = linkTools(dir, tools);
    process.stdout.write(
      [
        `cellfed is running: the router at ${router.url} in front of ${env.cells.map((cell) => cell.id).join(', ')},`,
        'the rebalance, backup and quota controllers behind it. In another shell:',
        `  export KUBECONFIG=${kubeconfig}`,
        `  export PATH=${bin}:$PATH`,
        '  kubectl cells status',
        `Logs: ${logs}. Ctrl-C stops the controllers, the router and every cell.`,
        '',
      ].join('\n'),
    );
    const ended = running.map(
      ({ name, child }) => new Promise<string>((resolve) => child.once('exit', () => resolve(name))),
    );
    const first = await Promise.race([
      ...ended,
      new Promise<undefined>((resolve) => stop.signal.addEventListener('abort', () => resolve(undefined))),
    ]);
    if (first) log.error({ component: first }, `${first} exited; stopping everything`);
    return first ? 1 : 0;
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    for (const { child } of running.reverse()) await stopApp({ child });
    log.info('stopping every cell');
    await provider.down({ dir, log });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    const [first, ...context] = message.split('\n');
    const code = error instanceof E2eError ? `${error.code}: ` : '';
    process.stderr.write(`cells: ${code}${first}\n${context.map((line) => `  | ${line}\n`).join('')}`);
    process.exit(error instanceof E2eError && error.code === E2eErrorCode.Interrupted ? 130 : 1);
  },
);
