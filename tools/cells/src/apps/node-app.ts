import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

import { E2eError, E2eErrorCode } from '../errors.ts';

/** One of cellfed's own processes (router, controllers) as the e2e suite runs it. */
export interface NodeApp {
  /** Its pino JSON log lines so far. */
  lines: Record<string, unknown>[];
  child: ChildProcess;
  /** Resolves once `probe` returns a value; throws with the app's last word if it exits first, or on timeout. */
  waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T>;
}

export interface SpawnAppOptions {
  /** Names it in errors. */
  name: string;
  main: string;
  args: string[];
  /** Also append its log lines to this file. */
  logFile?: string;
  /**
   * How many of its latest log lines to keep in memory: all by default (tests read them); a long-running
   * `npm start` keeps only the latest.
   */
  keepLines?: number;
  /** How long it may take to start (default 60 s). */
  timeoutMs?: number;
}

/** Starts `node main args…`, collecting its log lines. */
export function spawnApp(options: SpawnAppOptions): NodeApp {
  const child = spawn(process.execPath, [options.main, ...options.args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const file = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    file?.write(chunk);
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    file?.write(`${line}\n`);
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
      // Trimmed in place, now and then: callers hold this very array.
      if (options.keepLines !== undefined && lines.length > 2 * options.keepLines)
        lines.splice(0, lines.length - options.keepLines);
    } catch {
      // not a log line
    }
  });
  child.once('exit', () => file?.end());
  // Starting from TypeScript source takes seconds of CPU; on a loaded two-core machine, tens of seconds.
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const waitFor = async <T>(
    what: string,
    probe: () => Promise<T | undefined> | T | undefined,
  ): Promise<T> => {
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (!isRunning(child)) {
        // Its own last word: a fatal log line (listen failed) or stderr (bad flags).
        const fatal = lines.findLast((line) => Number(line.level) >= 50);
        const reason = fatal
          ? `${String(fatal.msg)}: ${String(fatal.err ?? '')}`
          : stderr.trim().split('\n')[0];
        throw new E2eError(
          E2eErrorCode.ProcessExited,
          `the ${options.name} exited with ${child.exitCode ?? child.signalCode} before ${what}: ${reason ?? ''}`,
        );
      }
      if (Date.now() > deadline)
        throw new E2eError(E2eErrorCode.NotReady, `the ${options.name} timed out waiting for ${what}`);
      await sleep(100);
    }
  };
  return { lines, child, waitFor };
}

/** Whether the process has neither exited nor been killed by a signal. */
export const isRunning = (child: ChildProcess): boolean =>
  child.exitCode === null && child.signalCode === null;

/** The port of its health server, then its /readyz answering 200. */
export async function waitUntilReady(app: NodeApp): Promise<number> {
  const httpPort = await app.waitFor(
    'its health server',
    () => app.lines.find((line) => line.httpPort !== undefined)?.httpPort as number | undefined,
  );
  await app.waitFor('readiness', async () => {
    const response = await fetch(`http://127.0.0.1:${httpPort}/readyz`).catch(() => undefined);
    return response?.status === 200 ? true : undefined;
  });
  return httpPort;
}

/** SIGTERM (or `signal`), and wait for the process to exit (nothing to do if it never started or ended). */
export async function stopApp(
  app: { child: ChildProcess } | undefined,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  const child = app?.child;
  if (!child || !isRunning(child)) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
