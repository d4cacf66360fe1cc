import { readEnvFile } from '../env-file.ts';
import { LocalCells } from '../local/local-cells.ts';

/** Prints env.json and, for the local provider, each process's resident memory in MiB. */
export function printStatus(dir: string): void {
  const env = readEnvFile(dir);
  const memory =
    env.provider === 'local'
      ? Object.fromEntries(
          [env.controlPlane, ...env.cells].map(({ id }) => [
            id,
            Object.fromEntries(
              Object.entries(LocalCells.open(dir).residentMemory(id)).map(([component, bytes]) => [
                component,
                Math.round(bytes / 2 ** 20),
              ]),
            ),
          ]),
        )
      : undefined;
  process.stdout.write(`${JSON.stringify({ ...env, residentMemoryMiB: memory }, null, 2)}\n`);
}
