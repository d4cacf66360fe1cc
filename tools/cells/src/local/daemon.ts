import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { E2eError, E2eErrorCode } from '../errors.ts';

/** How to start a long-running process; stored in the provider's state so a test can restart it. */
export interface DaemonSpec {
  /** Stable name within the environment, e.g. `cell-1/kube-apiserver`. */
  name: string;
  command: string;
  args: string[];
  logFile: string;
}

/** A started daemon: its spec plus what identifies the running process. */
export interface DaemonRecord extends DaemonSpec {
  pid: number;
  /** Process start time in clock ticks since boot (/proc/<pid>/stat field 22): guards against pid reuse. */
  startTicks: number;
}

/**
 * Starts `spec` in its own process group, detached from the caller, stdout and stderr appended to its
 * log file. Detached, because `cells up` returns while the cells keep running; its own group, so `stop`
 * also reaches anything the daemon forks.
 */
export function startDaemon(spec: DaemonSpec): DaemonRecord {
  const log = openSync(spec.logFile, 'a');
  try {
    const child = spawn(spec.command, spec.args, { detached: true, stdio: ['ignore', log, log] });
    if (child.pid === undefined) {
      throw new E2eError(E2eErrorCode.ProcessExited, `${spec.name}: could not start ${spec.command}`);
    }
    child.unref();
    // Node reaps the child when it exits, so a crashed daemon does not linger as a zombie that still
    // answers kill(pid, 0) while the caller is alive.
    child.on('error', () => undefined);
    return { ...spec, pid: child.pid, startTicks: startTicksOf(child.pid) ?? 0 };
  } finally {
    closeSync(log);
  }
}

/**
 * True while the process recorded in `record` (not some later process with its pid) is running. A
 * `startTicks` of 0 (not known) accepts any live, non-zombie process with that pid.
 */
export function isRunning(record: Pick<DaemonRecord, 'pid' | 'startTicks'>): boolean {
  const ticks = startTicksOf(record.pid);
  return ticks !== undefined && (record.startTicks === 0 || ticks === record.startTicks);
}

/**
 * Stops the daemon's process group: SIGTERM, then SIGKILL after `graceMs`. Idempotent: a daemon that has
 * already exited is left alone, and so is a reused pid.
 */
export async function stopDaemon(record: DaemonRecord, graceMs = 10_000): Promise<void> {
  if (!isRunning(record)) return;
  signalGroup(record.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isRunning(record) && Date.now() < deadline) await sleep(50);
  if (isRunning(record)) {
    signalGroup(record.pid, 'SIGKILL');
    while (isRunning(record)) await sleep(20);
  }
  // The leader is gone; a child that ignored SIGTERM would be orphaned, so the whole group goes.
  signalGroup(record.pid, 'SIGKILL');
}

/** The last `lines` lines of a daemon's log, for error messages. */
export function tailLog(file: string, lines = 20, maxBytes = 16_384): string {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return '(no log)';
  }
  const length = Math.min(size, maxBytes);
  const buffer = Buffer.alloc(length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** The error for a daemon that exited while it should be running, with the end of its log. */
export function exitedError(record: DaemonSpec): E2eError {
  return new E2eError(
    E2eErrorCode.ProcessExited,
    `${record.name} exited; last lines of ${record.logFile}:\n${tailLog(record.logFile)}`,
  );
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Start time of a live, non-zombie process, or undefined when there is none. */
function startTicksOf(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces and parentheses; the fields after it do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
  return Number(fields[19]);
}
