import { readFileSync } from 'node:fs';

/** The resident memory of a process now (its VmRSS), in MiB. */
export function residentMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}
