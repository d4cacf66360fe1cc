import { readFileSync } from 'node:fs';

import { request } from 'undici';

/** The resident memory of a process now (its VmRSS), in MiB. */
export function residentMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}

/** A cellfed process's memory as its V8 and Node.js report it (its /metrics on `httpPort`), in MiB. */
export async function reportedMemoryMb(
  httpPort: number,
): Promise<{ heapUsedMb: number; heapTotalMb: number; externalMb: number }> {
  const text = await (await request(`http://127.0.0.1:${httpPort}/metrics`)).body.text();
  const read = (name: string) =>
    Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 1024 / 1024;
  return {
    heapUsedMb: read('nodejs_heap_size_used_bytes'),
    heapTotalMb: read('nodejs_heap_size_total_bytes'),
    externalMb: read('nodejs_external_memory_bytes'),
  };
}
