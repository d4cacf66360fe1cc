import { join } from 'node:path';
import { rmSync } from 'node:fs';

import { z } from 'zod';

import { readJsonFile, writeJsonFile } from '../env-file.ts';
import type { Command } from './kind-plan.ts';

/**
 * What the kind provider keeps in DIR for its later commands (add-cell, kill-cell, down: other processes,
 * maybe with another PATH): the clusters it made, and the node image and kind binary it made them with.
 */
const KindStateSchema = z.object({
  clusters: z.array(z.string()),
  nodeImage: z.string().optional(),
  kind: z.string().optional(),
});
export type KindState = z.output<typeof KindStateSchema>;

const statePath = (dir: string) => join(dir, 'kind-state.json');

/** The state in `dir`; none (no clusters) where there is no readable state. */
export function readKindState(dir: string): KindState {
  try {
    return readJsonFile(statePath(dir), KindStateSchema, 'kind provider state');
  } catch {
    return { clusters: [] };
  }
}

export function writeKindState(dir: string, state: KindState): void {
  writeJsonFile(statePath(dir), state);
}

export function removeKindState(dir: string): void {
  rmSync(statePath(dir), { force: true });
}

/** A planned command with `kind` replaced by the binary the state names. */
export function withKindOf(state: KindState, command: Command): Command {
  return command.command === 'kind' && state.kind ? { ...command, command: state.kind } : command;
}
