#!/usr/bin/env node
// `npm run cells -- up|down|status|run`: real cells for development and the e2e suite. scripts/cells.sh
// builds the tools first and passes their directory in CELLFED_TOOLS_BIN.
import { join, resolve } from 'node:path';

import { E2eError, E2eErrorCode } from '../errors.ts';
import { createLogger } from '../log.ts';
import { readEnvFile } from '../env-file.ts';
import { CHART_CRD_DIR } from '../paths.ts';
import type { Provider } from '../provider.ts';
import { createProvider } from '../providers.ts';
import { startRouter, stopRouter, writeRouterKubeconfig } from '../router/router-process.ts';
import { parseCellsArgs } from './cells-args.ts';
import { printStatus } from './cells-status.ts';

async function main(): Promise<number> {
  const args = parseCellsArgs(process.argv.slice(2), process.env);
  const log = createLogger({ level: args.logLevel });
  if (args.command === 'status') {
    printStatus(args.dir);
    return 0;
  }
  const provider = createProvider(args.provider, {
    toolsDir: args.tools,
    crdDir: CHART_CRD_DIR,
    runtimeRoot: args.runtimeRoot,
  });
  if (args.command === 'down') {
    await provider.down({ dir: args.dir, log });
    return 0;
  }
  if (args.command === 'add-cell' || args.command === 'remove-cell') {
    if (!provider.addCell || !provider.removeCell) {
      throw new E2eError(E2eErrorCode.InvalidArguments, `${args.command} works with the local provider only`);
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
  return runFederation(provider, args.dir, args.routerPort, log);
}

/**
 * `run`: the cells just started, the router in front of them, and a kubeconfig for it; in the foreground
 * until Ctrl-C (or SIGTERM, or the router ending), which stops the router and then every cell.
 */
async function runFederation(
  provider: Provider,
  dir: string,
  port: number,
  log: ReturnType<typeof createLogger>,
): Promise<number> {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => stop.abort(new Error(`received ${signal}`));
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    const env = readEnvFile(dir);
    log.info({ port }, 'starting the cell router');
    const router = await startRouter(env, { port, logFile: join(dir, 'logs', 'cell-router.log') });
    const kubeconfig = writeRouterKubeconfig(
      env,
      router.url,
      resolve(dir, 'kubeconfig', 'router.kubeconfig'),
    );
    process.stdout.write(
      [
        `cellfed is running: the router at ${router.url} in front of ${env.cells.map((cell) => cell.id).join(', ')}.`,
        `  export KUBECONFIG=${kubeconfig}`,
        `  kubectl create namespace demo && kubectl -n demo create deployment web --image=nginx`,
        `Router log: ${resolve(dir, 'logs', 'cell-router.log')}. Ctrl-C stops the router and every cell.`,
        '',
      ].join('\n'),
    );
    const exited = new Promise<void>((resolve) => router.child.once('exit', () => resolve()));
    await Promise.race([exited, new Promise((resolve) => stop.signal.addEventListener('abort', resolve))]);
    const code = stop.signal.aborted ? 0 : 1;
    if (code === 1)
      log.error({ exitCode: router.child.exitCode }, 'the cell router exited; stopping the cells');
    await stopRouter(router);
    return code;
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
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
