import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import type { EnvFile } from '../env-file.ts';
import { spawnApp, stopApp, waitUntilReady } from './node-app.ts';

const REBALANCE_MAIN = fileURLToPath(
  new URL('../../../packages/rebalance-controller/src/main.ts', import.meta.url),
);

export interface RebalanceProcess {
  httpPort: number;
  /** Its JSON log lines so far. */
  lines: Record<string, unknown>[];
  child: ChildProcess;
}

export interface StartRebalanceOptions {
  /** More flags, e.g. `--cellset x --delete-after 5s`. */
  args?: string[];
  /** The cells that must be engaged before it counts as started (default: none). */
  cells?: string[];
  logFile?: string;
  timeoutMs?: number;
}

/**
 * The rebalance controller (packages/rebalance-controller) as its own process against an environment's
 * control plane, as it runs for real: resolves once it is ready (caches listed) with the cells engaged.
 */
export async function startRebalanceController(
  env: EnvFile,
  options: StartRebalanceOptions = {},
): Promise<RebalanceProcess> {
  const app = spawnApp({
    name: 'rebalance controller',
    main: REBALANCE_MAIN,
    args: ['--kubeconfig', env.controlPlane.kubeconfig, '--http-port', '0', ...(options.args ?? [])],
    ...(options.logFile ? { logFile: options.logFile } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  try {
    const httpPort = await waitUntilReady(app);
    const cells = options.cells ?? [];
    await app.waitFor(`cells ${cells.join(', ')} to be engaged`, () =>
      cells.every((cell) => app.lines.some((line) => line.msg === 'cell engaged' && line.cell === cell))
        ? true
        : undefined,
    );
    return { httpPort, lines: app.lines, child: app.child };
  } catch (error) {
    await stopApp(app);
    throw error;
  }
}

/** SIGTERM (or SIGKILL for a crash), and wait for it to exit. */
export const stopRebalanceController = (
  controller: { child: ChildProcess } | undefined,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> => stopApp(controller, signal);
