import { readEnvFile } from '../env-file.ts';
import { LocalCells } from '../local/local-cells.ts';

/** Prints env.json and, for the local provider, each process's resident memory in MiB. */
export function printStatus(dir: string): void {
  const env = readEnvFile(dir);
  let memory: Record<string, Record<string, number>> | undefined;
  if (env.provider === 'local') {
    const cells = LocalCells.open(dir);
    memory = {};
    for (const { id } of [env.controlPlane, ...env.cells]) {
      const inMiB = Object.entries(cells.residentMemory(id)).map(([component, bytes]) => [
        component,
        Math.round(bytes / 2 ** 20),
      ]);
      memory[id] = Object.fromEntries(inMiB);
    }
  }
  process.stdout.write(`${JSON.stringify({ ...env, residentMemoryMiB: memory }, null, 2)}\n`);
}
