import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/**
 * The production shape on a small machine: the cells' apiservers and etcds on one CPU, cellfed's process
 * and the load generator on another, the same in both arms of a comparison (separate pods in production).
 */
export const PINNING = { apiserversAndEtcd: 0, cellfedAndLoad: 1 } as const;

/** Whether this machine can pin that way (two CPUs at least) and the run did not turn it off. */
export function canPin(env: NodeJS.ProcessEnv = process.env): boolean {
  return cpus().length >= 2 && env['CELLFED_BENCH_PIN'] !== 'false';
}

/** Pins every thread of process `pid` (and those it starts later) to `cpu`. */
export function pinToCpu(pid: number, cpu: number): void {
  execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', String(cpu), String(pid)], {
    stdio: 'ignore',
  });
}

let clockTicks: number | undefined;

/** The CPU time the processes `pids` have used so far, together (user + system, from /proc), in microseconds. */
export function cpuMicros(...pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + processCpuMicros(pid), 0);
}

function processCpuMicros(pid: number): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; what follows its `)` starts at field 3 (the state).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const userTicks = Number(fields[14 - 3]);
  const systemTicks = Number(fields[15 - 3]);
  return ((userTicks + systemTicks) * 1e6) / clockTicks;
}
