import { join } from 'node:path';

import { z } from 'zod';

import { readJsonFile, writeJsonFile } from '../env-file.ts';

export const LOCAL_STATE_FILE = 'local-state.json';
export const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager'] as const;
export type Component = (typeof COMPONENTS)[number];

const DaemonRecordSchema = z.object({
  name: z.string(),
  command: z.string(),
  args: z.array(z.string()),
  logFile: z.string(),
  pid: z.number().int(),
  startTicks: z.number(),
});

const ApiserverStateSchema = z.object({
  id: z.string(),
  url: z.string(),
  port: z.number().int(),
  etcdClientPort: z.number().int(),
  pkiDir: z.string(),
  etcdDataDir: z.string(),
  daemons: z.partialRecord(z.enum(COMPONENTS), DaemonRecordSchema),
});

/**
 * What the local provider started in DIR: enough for `down` in another process to stop it all, and for a
 * fault test to stop and restart one process. Written after every start, so a failed `up` leaves nothing
 * `down` cannot find.
 */
export const LocalStateSchema = z.object({
  version: z.literal(1),
  /** tmpfs directory holding the etcd data directories. */
  runtimeDir: z.string(),
  apiservers: z.record(z.string(), ApiserverStateSchema),
});

export type ApiserverState = z.output<typeof ApiserverStateSchema>;
export type LocalState = z.output<typeof LocalStateSchema>;

export function localStatePath(dir: string): string {
  return join(dir, LOCAL_STATE_FILE);
}

export function readLocalState(dir: string): LocalState {
  return readJsonFile(localStatePath(dir), LocalStateSchema, 'local provider state');
}

export function writeLocalState(dir: string, state: LocalState): void {
  writeJsonFile(localStatePath(dir), state);
}
