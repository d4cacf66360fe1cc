// `npx nx run e2e:bench`: how long `cells up` takes and how much memory a cell holds, beside the smallest
// environment (control plane + 1 cell, no kube-controller-manager) measured the same way in the same run.
// Writes bench/results/cells.json. Needs CELLFED_TOOLS_BIN (scripts/build-tools.sh prints it).
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createLogger } from '../src/log.ts';
import { LocalCells } from '../src/local/local-cells.ts';
import { LocalProvider } from '../src/local/local-provider.ts';
import { CHART_CRD_DIR } from '../src/paths.ts';

const RUNS = Number(process.env['CELLFED_BENCH_RUNS'] ?? 3);
const toolsDir = process.env['CELLFED_TOOLS_BIN'];
const log = createLogger({ level: 'warn' });
const provider = new LocalProvider({ toolsDir, crdDir: CHART_CRD_DIR });
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const mib = (bytes: number | undefined) => Math.round(((bytes ?? 0) / 2 ** 20) * 10) / 10;

async function measure(cells: number, controllerManager: boolean) {
  const seconds: number[] = [];
  let memory: Record<string, { etcd: number; kubeApiserver: number; kubeControllerManager: number }> = {};
  for (let run = 1; run <= RUNS; run++) {
    const dir = mkdtempSync(join(tmpdir(), 'cellfed-bench-'));
    const started = process.hrtime.bigint();
    const env = await provider.up({ dir, cells, controllerManager, images: [], log });
    seconds.push(Number(process.hrtime.bigint() - started) / 1e9);
    const local = LocalCells.open(dir);
    memory = Object.fromEntries(
      [env.controlPlane, ...env.cells].map(({ id }) => {
        const rss = local.residentMemory(id);
        return [
          id,
          {
            etcd: mib(rss.etcd),
            kubeApiserver: mib(rss['kube-apiserver']),
            kubeControllerManager: mib(rss['kube-controller-manager']),
          },
        ];
      }),
    );
    await provider.down({ dir, log });
    rmSync(dir, { recursive: true, force: true });
    process.stderr.write(
      `cells=${cells} controllerManager=${controllerManager} run ${run}/${RUNS}: ${seconds.at(-1)!.toFixed(2)} s\n`,
    );
  }
  return { seconds, medianSeconds: median(seconds), residentMemoryMiB: memory };
}

const full = await measure(3, true);
const minimal = await measure(1, false);
const cellRss = Object.entries(full.residentMemoryMiB)
  .filter(([id]) => id !== 'control-plane')
  .map(([, rss]) => rss.etcd + rss.kubeApiserver);
let build: unknown;
try {
  build = JSON.parse(readFileSync(join(dirname(toolsDir!), 'build.json'), 'utf8'));
} catch {
  build = undefined;
}
const result = {
  benchmark: 'cells',
  date: new Date().toISOString(),
  machine: { node: process.version, cpus: (await import('node:os')).cpus().length },
  runs: RUNS,
  figures: {
    upSeconds: full.medianSeconds,
    upGoalSeconds: 30,
    minimalUpSeconds: minimal.medianSeconds,
    upOverMinimal: Math.round((full.medianSeconds / minimal.medianSeconds) * 100) / 100,
    cellResidentMiB: Math.max(...cellRss),
  },
  full: {
    description:
      'control plane + 3 cells, each etcd + kube-apiserver + kube-controller-manager, bootstrapped',
    ...full,
  },
  minimal: { description: 'control plane + 1 cell, etcd + kube-apiserver only, bootstrapped', ...minimal },
  toolsBuild: build,
};
const out = fileURLToPath(new URL('../../../bench/results/cells.json', import.meta.url));
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(result.figures)}\n`);
