import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { cellUserArgs, credentialsNamespace, localCellUser } from '../chart/cell-identities.ts';
import { componentKubeconfig, type EnvFile } from '../env-file.ts';
import { spawnApp, stopApp, waitUntilReady } from './node-app.ts';

/** cellfed's controllers, by the package they are built from. */
const CONTROLLER_MAINS = {
  'rebalance-controller': '../../../../packages/rebalance-controller/src/main.ts',
  'backup-controller': '../../../../packages/backup-controller/src/main.ts',
} as const;

export type ControllerName = keyof typeof CONTROLLER_MAINS;

export interface ControllerProcess {
  httpPort: number;
  /** Its JSON log lines so far. */
  lines: Record<string, unknown>[];
  child: ChildProcess;
}

export interface StartControllerOptions {
  /** More flags, e.g. `--cellset x --delete-after 5s`. */
  args?: string[];
  /** The cells that must be engaged before it counts as started (default: none). */
  cells?: string[];
  logFile?: string;
  /** How many of its latest log lines to keep in memory (all by default). */
  keepLines?: number;
  timeoutMs?: number;
}

/**
 * One of cellfed's controllers as its own process against an environment's control plane, as it runs for
 * real: resolves once it is ready (caches listed) with the cells engaged.
 */
export async function startController(
  name: ControllerName,
  env: EnvFile,
  options: StartControllerOptions = {},
): Promise<ControllerProcess> {
  const app = spawnApp({
    name: name.replace('-', ' '),
    main: fileURLToPath(new URL(CONTROLLER_MAINS[name], import.meta.url)),
    args: [
      '--kubeconfig',
      componentKubeconfig(env, name),
      '--http-port',
      '0',
      // Its own cell credentials, as the chart gives them (charts/cellfed: <component>.credentialsNamespace).
      '--credentials-namespace',
      credentialsNamespace(name),
      // The router and the backup controller are someone else in the cells; the fence exempts them too.
      ...(name === 'rebalance-controller'
        ? cellUserArgs(localCellUser, ['router', 'backup-controller'])
        : []),
      ...(options.args ?? []),
    ],
    ...(options.logFile ? { logFile: options.logFile } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.keepLines !== undefined ? { keepLines: options.keepLines } : {}),
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

/** The rebalance controller (packages/rebalance-controller); see {@link startController}. */
export const startRebalanceController = (env: EnvFile, options?: StartControllerOptions) =>
  startController('rebalance-controller', env, options);

/** The backup controller (packages/backup-controller); see {@link startController}. */
export const startBackupController = (env: EnvFile, options?: StartControllerOptions) =>
  startController('backup-controller', env, options);

/** SIGTERM (or SIGKILL for a crash), and wait for it to exit. */
export const stopController = (
  controller: { child: ChildProcess } | undefined,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> => stopApp(controller, signal);

/**
 * The latest distinct warnings and errors in a controller's log, newest last, each with how often it came:
 * what a failed wait should print, since CI keeps the test output but not the log files.
 */
export function recentTrouble(lines: readonly Record<string, unknown>[], limit = 5): string[] {
  const counts = new Map<string, number>();
  for (const line of lines) {
    if (Number(line.level) < 40) continue;
    const err = line.err as { message?: unknown } | undefined;
    const text = [line.cell, line.msg, err?.message].filter((part) => part !== undefined).join(': ');
    const seen = (counts.get(text) ?? 0) + 1;
    counts.delete(text); // re-inserted, so the map's order is by latest occurrence
    counts.set(text, seen);
  }
  return [...counts].slice(-limit).map(([text, count]) => `${count}× ${text.slice(0, 300)}`);
}
