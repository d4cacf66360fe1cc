#!/usr/bin/env node
// `npm run cells -- up|down|status`: real cells for development and the e2e suite. scripts/cells.sh builds
// the tools first and passes their directory in CELLFED_TOOLS_BIN.
import { E2eError, E2eErrorCode } from '../errors.ts';
import { createLogger } from '../log.ts';
import { CHART_CRD_DIR } from '../paths.ts';
import { createProvider } from '../providers.ts';
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
  process.stdout.write(`${args.dir}/env.json\n`);
  return 0;
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
