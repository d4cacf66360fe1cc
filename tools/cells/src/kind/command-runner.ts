import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

import { E2eError, E2eErrorCode } from '../errors.ts';
import type { Command } from './kind-plan.ts';

export interface CommandResult {
  stdout: string;
}

/** Runs a {@link Command}; injected so unit tests can record commands instead of running them. */
export type CommandRunner = (command: Command, signal?: AbortSignal) => Promise<CommandResult>;

/** Runs a command to completion; a non-zero exit is an error carrying the end of its stderr. */
export const runCommand: CommandRunner = (command, signal) =>
  new Promise((resolve, reject) => {
    const child = spawn(command.command, command.args, { stdio: ['ignore', 'pipe', 'pipe'], signal });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) =>
      reject(
        new E2eError(E2eErrorCode.CommandFailed, `${command.command}: ${error.message}`, { cause: error }),
      ),
    );
    child.on('close', (code) => {
      if (code === 0) resolve({ stdout });
      else {
        const detail = stderr.trim().split('\n').slice(-5).join(' / ');
        reject(
          new E2eError(
            E2eErrorCode.CommandFailed,
            `${[command.command, ...command.args].join(' ')} exited ${code}: ${detail}`,
          ),
        );
      }
    });
  });

/** The absolute path of the executable `name` on `path` (a PATH value); undefined when there is none. */
export function onPath(name: string, path = process.env['PATH'] ?? ''): string | undefined {
  if (isAbsolute(name)) return name;
  for (const dir of path.split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}
