// `npx nx run controller-kit:bench`: writes bench/results/controller-kit.json.
//  - queueOpsPerSecond: add+get+done per second over 100k distinct keys (goal ≥ 100 000), beside the same
//    loop on a bare FIFO with a dedup Set (the least any queue does) and on the kit's queue without metrics.
//  - bytesPerObject: resident memory per object of a metadata-only informer holding 100k ConfigMaps from a
//    real kube-apiserver (goal ≤ 2048), beside the kit's full-object informer and client-node's informer
//    on the same objects, each in its own process.
// The apiserver comes from the e2e tooling (`cells up`, tools built by scripts/build-tools.sh).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Registry } from 'prom-client';

import { KubeClient } from '../src/index.ts';
import { WorkQueue } from '../src/queue/work-queue.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../../..');
const KEYS = Number(process.env['CELLFED_BENCH_KEYS'] ?? 100_000);
const OBJECTS = Number(process.env['CELLFED_BENCH_OBJECTS'] ?? 100_000);
const RUNS = Number(process.env['CELLFED_BENCH_RUNS'] ?? 3);
const progress = (message: string) => process.stderr.write(`${message}\n`);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;

// ---- queue --------------------------------------------------------------------------------------------

const keys = Array.from({ length: KEYS }, (_, i) => `cell-${i % 7}/namespace-${i % 100}/object-${i}`);

async function kitQueue(withMetrics: boolean): Promise<number> {
  const queue = new WorkQueue({ name: 'bench', ...(withMetrics ? { registry: new Registry() } : {}) });
  const started = performance.now();
  for (const key of keys) queue.add(key);
  for (let i = 0; i < keys.length; i++) {
    const item = (await queue.get())!;
    queue.done(item.key);
  }
  return keys.length / ((performance.now() - started) / 1000);
}

/** The least a work queue does: FIFO plus a set that collapses re-adds. */
async function bareFifo(): Promise<number> {
  const items: string[] = [];
  let head = 0;
  const dirty = new Set<string>();
  const started = performance.now();
  for (const key of keys) {
    if (!dirty.has(key)) {
      dirty.add(key);
      items.push(key);
    }
  }
  for (let i = 0; i < keys.length; i++) {
    const key = await Promise.resolve(items[head++]!);
    dirty.delete(key);
  }
  return keys.length / ((performance.now() - started) / 1000);
}

const queueRuns = { kit: [] as number[], kitNoMetrics: [] as number[], bareFifo: [] as number[] };
for (let run = 0; run < RUNS + 1; run++) {
  const kit = await kitQueue(true);
  const kitNoMetrics = await kitQueue(false);
  const bare = await bareFifo();
  if (run === 0) continue; // warm-up
  queueRuns.kit.push(kit);
  queueRuns.kitNoMetrics.push(kitNoMetrics);
  queueRuns.bareFifo.push(bare);
  progress(
    `queue run ${run}/${RUNS}: ${round(kit)} ops/s (no metrics ${round(kitNoMetrics)}, bare FIFO ${round(bare)})`,
  );
}

// ---- informer memory ---------------------------------------------------------------------------------

const tools =
  process.env['CELLFED_TOOLS_BIN'] ??
  execFileSync('bash', [join(root, 'scripts/build-tools.sh')], { encoding: 'utf8' }).trim();
const cellsCli = join(root, 'tools/cells/src/cli/cells.ts');
const dir = mkdtempSync(join(tmpdir(), 'cellfed-kit-bench-'));
const cells = (...args: string[]) =>
  execFileSync(process.execPath, [cellsCli, ...args, '--dir', dir, '--tools', tools, '--log-level', 'warn'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });

interface Reading {
  mode: string;
  objects: number;
  syncSeconds: number;
  before: { rss: number; heapUsed: number };
  after: { rss: number; heapUsed: number };
}

function measure(mode: string, kubeconfig: string): Promise<Reading> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', join(here, 'informer-memory.ts'), mode, kubeconfig, 'bench'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Reading) : reject(new Error(`${mode}: exit ${code}`)),
    );
  });
}

const informers: Record<string, Reading & { bytesPerObject: number; heapBytesPerObject: number }> = {};
try {
  progress(`starting one cell (etcd + kube-apiserver) in ${dir}`);
  cells('up', '--cells', '1', '--no-controller-manager');
  const env = JSON.parse(readFileSync(join(dir, 'env.json'), 'utf8')) as { cells: { kubeconfig: string }[] };
  const kubeconfig = env.cells[0]!.kubeconfig;
  const client = KubeClient.fromFile(kubeconfig);
  await client.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } },
  });
  // A small, ordinary ConfigMap: a few labels, an annotation, 256 bytes of data.
  const payload = 'x'.repeat(256);
  let created = 0;
  const started = performance.now();
  const worker = async () => {
    for (let i = created++; i < OBJECTS; i = created++) {
      await client.request('POST', '/api/v1/namespaces/bench/configmaps', {
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: `config-${i}`,
            labels: { app: `app-${i % 500}`, tier: 'backend', 'cellfed.io/bench': 'true' },
            annotations: { 'example.com/owner': `team-${i % 40}` },
          },
          data: { 'settings.json': payload },
        },
      });
      if ((i + 1) % 10_000 === 0)
        progress(
          `created ${i + 1}/${OBJECTS} ConfigMaps (${round((performance.now() - started) / 1000, 1)} s)`,
        );
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  await client.close();
  for (const mode of ['metadata', 'full', 'client-node']) {
    const readings: Reading[] = [];
    for (let run = 0; run < RUNS; run++) readings.push(await measure(mode, kubeconfig));
    const reading = readings.sort((a, b) => a.after.rss - a.before.rss - (b.after.rss - b.before.rss))[
      Math.floor(RUNS / 2)
    ]!;
    const bytesPerObject = round((reading.after.rss - reading.before.rss) / reading.objects);
    const heapBytesPerObject = round((reading.after.heapUsed - reading.before.heapUsed) / reading.objects);
    informers[mode] = { ...reading, bytesPerObject, heapBytesPerObject };
    progress(
      `${mode} informer: ${reading.objects} objects, ${bytesPerObject} B/object resident, synced in ${round(reading.syncSeconds, 1)} s`,
    );
  }
} finally {
  try {
    cells('down');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const queueOpsPerSecond = round(median(queueRuns.kit));
const result = {
  benchmark: 'controller-kit',
  date: new Date().toISOString(),
  machine: { node: process.version, cpus: cpus().length },
  runs: RUNS,
  figures: {
    bytesPerObject: informers['metadata']!.bytesPerObject,
    bytesPerObjectGoal: 2048,
    fullObjectBytesPerObject: informers['full']!.bytesPerObject,
    clientNodeInformerBytesPerObject: informers['client-node']!.bytesPerObject,
    metadataOverClientNode: round(
      informers['metadata']!.bytesPerObject / informers['client-node']!.bytesPerObject,
      3,
    ),
    fullOverClientNode: round(
      informers['full']!.bytesPerObject / informers['client-node']!.bytesPerObject,
      3,
    ),
    queueOpsPerSecond,
    queueOpsPerSecondGoal: 100_000,
    queueOpsPerSecondWithoutMetrics: round(median(queueRuns.kitNoMetrics)),
    bareFifoOpsPerSecond: round(median(queueRuns.bareFifo)),
    queueOverBareFifo: round(queueOpsPerSecond / median(queueRuns.bareFifo), 3),
  },
  queue: {
    keys: KEYS,
    description: 'add all keys, then get+done each; one op = add+get+done of one key',
    runs: queueRuns,
  },
  informers: {
    objects: OBJECTS,
    description: 'resident memory after sync minus before, per object; median of runs',
    ...informers,
  },
};
const out = join(root, 'bench/results/controller-kit.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(result.figures)}\n`);
