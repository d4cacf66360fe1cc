// `npm run benchmarks`: BENCHMARKS.md from bench/results/*.json — every figure with its goal, whether it is
// met, and the anchor it is compared with. The results are written by each project's `bench` target; this
// only collects them, so the page says what the last runs measured, on the machine each names.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { PLOTS } from './lib/bench-plots.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const results = join(root, 'bench', 'results');
/** The measured curves (lib/bench-plots.mjs), drawn again with the page. */
const plots = join(root, 'bench', 'plots');

/** Per results file: the command that writes it, what it is compared with, and the direction of bare goals. */
const BENCHMARKS = {
  'hashing.json': {
    command: 'npx nx run hashing:bench',
    anchor: 'hashring@3.2.0 (md5), the most used consistent-hash ring on npm, on the same keys',
  },
  'controller-kit.json': {
    command: 'npx nx run controller-kit:bench',
    anchor: "client-node's informer (memory per object) and a bare FIFO (queue throughput)",
    goals: { bytesPerObject: ['≤', 'bytesPerObjectGoal'], queueOpsPerSecond: ['≥', 'queueOpsPerSecondGoal'] },
  },
  'cells.json': {
    command: 'npx nx run e2e:bench',
    anchor: 'the minimal environment (control plane and one cell, no controller managers)',
    goals: { upSeconds: ['≤', 'upGoalSeconds'] },
  },
  'router.json': {
    command: 'npx nx run cell-router:bench',
    anchor:
      'the same load straight to one real apiserver, through a bare Node.js proxy (`bareProxyFigures`) and through a Go standard-library reverse proxy (`goProxyFigures`: the peer-class floor; `*OverGoProxy` are the router over it)',
    direction: {
      getP50Ratio: '≤',
      getP99Ratio: '≤',
      throughputRatio: '≥',
      routerCpuPerGetOverApiserver: '≤',
      getP50OverGoProxy: '≤',
      cpuPerGetOverGoProxy: '≤',
      apiserverUsPerRoutedGetOverDirect: '≤',
    },
  },
  'router-list.json': {
    command: 'npx nx run cell-router:bench-list',
    anchor:
      '30k objects listed straight from one apiserver; Argo CD takes > 10 s to list 3000 apps ([T4] in [docs/design.md](docs/design.md#sources))',
    direction: {
      list30kRatio: '≤',
      list30kPagedRatio: '≤',
      watchAddedP99Ms: '≤',
      watchListInitialRatio: '≤',
      routerRssGrowthOverResponse: '≤',
    },
  },
  'router-scale.json': {
    command: 'npx nx run cell-router:bench-scale',
    anchor:
      'the same router at two federation sizes (the slope is between them), and one cell asked directly for the cold first answers; the design talk federation holds 10M+ pods',
    direction: {
      routerRssBytesPerObject: '≤',
      coldListFirstByteRatio: '≤',
      coldWatchFirstEventRatio: '≤',
    },
  },
  'router-watch.json': {
    command: 'npx nx run cell-router:bench-watch',
    anchor:
      'one kube-apiserver serving the same number of watches of the same objects itself, in the same run (its dropped and late events say what this machine can deliver)',
    direction: {
      routerUsPerEventPerWatch: '≤',
      routerUsPerPodEventPerWatch: '≤',
      cellCpuPerEventAt1000WatchesRatio: '≤',
      eventsDroppedOrLate1000Watches: '≤',
    },
  },
  'auth-fairness.json': {
    command: 'npx nx run cell-router:bench-auth',
    anchor:
      "one kube-apiserver (its own authenticator and API Priority and Fairness) with the same RBAC, under the same flood; each arm's tenant p99 over its own idle p99",
  },
  'rebalance.json': {
    command: 'npx nx run rebalance-controller:bench',
    anchor:
      'the migration protocol itself (fence label on the read version, create in the new cell, migrated label) by a plain loop over twins of the same objects at the same concurrency',
  },
  'proof-rebalance-crashes.json': {
    command: 'npx nx run e2e:proof',
    anchor: 'the guarantees of docs/migration.md, checked on real cells (a zero is the only passing figure)',
  },
  'proof-router-fuzz.json': {
    command: 'npx nx run e2e:proof',
    anchor:
      'seeded hostile requests at the router in front of real cells (a zero is the only passing figure)',
  },
  'proof-router-flood.json': {
    command: 'npx nx run e2e:proof',
    anchor:
      "the router's RSS before the flood; before bodies were authorized first, 300 such bodies grew it by 2.2 GB",
  },
  'proof-authz.json': {
    command: 'npx nx run e2e:proof',
    anchor:
      'one plain kube-apiserver with the same RBAC and objects, asked the same requests by the same callers (a zero is the only passing figure)',
  },
  'proof-authz-move-failover.json': {
    command: 'npx nx run e2e:proof',
    anchor:
      'one plain kube-apiserver with the same RBAC and objects, asked the same requests by the same callers (a zero is the only passing figure)',
  },
  'proof-leader-failover.json': {
    command: 'npx nx run e2e:proof',
    anchor:
      "the 15 s takeover the operator issue asks for; controller-runtime's defaults (15 s lease, 2 s retry) allow 17 s",
  },
  'conformance.json': {
    command: 'npx nx run e2e:conformance',
    anchor:
      'the same Kubernetes e2e specs (e2e/conformance/specs.txt) against one plain kube-apiserver; e2e/conformance/differences.json explains each spec that fails only through the router',
  },
  'backup.json': {
    command: 'npx nx run backup-controller:bench',
    anchor: 'a raw watch → apply loop between the same two apiservers, under the same 100 writes/s',
    direction: {
      lagP50Ms: '≤',
      lagP99Ms: '≤',
      lagVsRawLoopRatio: '≤',
      failoverReadsS: '≤',
      failoverWritesS: '≤',
      backupWriteCpuOverCreate: '≤',
      firstWriteP99OverReads: '≤',
    },
  },
};

/** The identity path's table (router.json `identityPath`): how each arm passes identity, what it costs the cell. */
function identityPathTable(rows) {
  if (!Array.isArray(rows)) return [];
  return [
    '',
    "The identity path: the cell's apiserver + etcd CPU per GET, by how the caller's identity reaches it (at one fixed rate in every arm; and at each arm's most, where a busier apiserver spends less per request).",
    '',
    '| arm | identity | to the cell | cell µs per GET (fixed rate) | over direct | cell µs per GET (most load) | throughput ratio | GET p50 ratio |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (row) =>
        `| ${row.arm} | ${row.identity} | ${row.toCell} | ${row.apiserverUsPerGetAtFixedRate} | ${row.apiserverUsPerGetOverDirect} | ${row.apiserverUsPerGetAtMostLoad} | ${row.throughputRatio} | ${row.getP50Ratio} |`,
    ),
  ];
}

const compare = { '≤': (a, b) => a <= b, '≥': (a, b) => a >= b, '=': (a, b) => a === b };
/** A goal as `≤ 2`, from `<= 2`, `≤ 2` or a bare number and its direction. */
function goalOf(raw, direction) {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'object') return goalOf(raw.goal, direction);
  if (typeof raw === 'number') return direction ? { op: direction, value: raw } : undefined;
  const match = /^\s*(<=|>=|≤|≥|=)\s*([-\d.]+)/.exec(String(raw));
  if (!match) return undefined;
  const op = { '<=': '≤', '>=': '≥' }[match[1]] ?? match[1];
  return { op, value: Number(match[2]) };
}

const files = readdirSync(results)
  .filter((name) => name.endsWith('.json'))
  .sort();
const allResults = Object.fromEntries(
  files.map((file) => [file, JSON.parse(readFileSync(join(results, file), 'utf8'))]),
);
mkdirSync(plots, { recursive: true });
/** A results file's plots, written to bench/plots, as the Markdown that shows them. */
function plotImages(file) {
  return (PLOTS[file] ?? []).flatMap((draw) => {
    const plot = draw(allResults);
    if (!plot) return [];
    writeFileSync(join(plots, `${plot.name}.svg`), plot.svg);
    return ['', `![${plot.title}](bench/plots/${plot.name}.svg)`];
  });
}

const sections = [];
let met = 0;
let unmet = 0;
for (const file of files) {
  const result = allResults[file];
  const about = BENCHMARKS[file] ?? { command: '(unknown)', anchor: result.baseline ?? '' };
  const machine = result.machine
    ? `${result.machine.cpus ?? '?'} cores${result.machine.model ? `, ${result.machine.model}` : ''}${result.machine.node ? `, Node.js ${result.machine.node}` : ''}`
    : [result.cpu, result.node].filter(Boolean).join(', ');
  const rows = [];
  for (const [name, value] of Object.entries(result.figures ?? {})) {
    if (/Goal(Seconds)?$/.test(name)) continue;
    const fromSibling = about.goals?.[name];
    const goal = fromSibling
      ? { op: fromSibling[0], value: result.figures[fromSibling[1]] }
      : goalOf(result.goals?.[name], about.direction?.[name]);
    const stated = result.met?.[name] ?? result.goals?.[name]?.met;
    const ok = goal
      ? typeof stated === 'boolean'
        ? stated
        : compare[goal.op](value, goal.value)
      : undefined;
    if (ok === true) met++;
    if (ok === false) unmet++;
    const shown = typeof value === 'number' ? String(Math.round(value * 1000) / 1000) : String(value);
    rows.push(
      `| ${name} | ${shown} | ${goal ? `${goal.op} ${goal.value}` : ''} | ${ok === undefined ? '' : ok ? 'yes' : '**no**'} |`,
    );
  }
  sections.push(
    [
      `## ${result.benchmark ?? file}`,
      '',
      `\`${about.command}\` → \`bench/results/${file}\`${result.date ? `, ${result.date.slice(0, 10)}` : ''}${machine ? `, ${machine}` : ''}.`,
      `Compared with: ${about.anchor}.`,
      ...(result.calibration
        ? [`The machine ran the calibration loop in ${result.calibration.loopMs} ms when this was written.`]
        : []),
      ...(result.pinning
        ? [
            result.pinning.pinned
              ? `Pinned (\`taskset\`): apiservers and etcds on CPU ${result.pinning.apiserversAndEtcdCpu}, cellfed and the load generator on CPU ${result.pinning.cellfedAndLoadCpu}, in both arms.`
              : `Not pinned: ${result.pinning.reason}.`,
          ]
        : []),
      '',
      '| figure | measured | goal | met |',
      '| --- | --- | --- | --- |',
      ...rows,
      ...identityPathTable(result.identityPath),
      ...plotImages(file),
    ].join('\n'),
  );
}

const page = [
  '# Benchmarks',
  '',
  'Every figure of `bench/results/*.json`, with its goal and the anchor it is compared with. Made by',
  "`npm run benchmarks` from the files the projects' `bench` targets write; each benchmark measures cellfed and",
  'its baseline side by side in one run. These machines have 2 cores: a pinned benchmark puts every apiserver',
  'and etcd on one and the cellfed process and the load generator on the other, in both arms (the production',
  'shape, where they are separate pods), and says so under its title; the others share both cores.',
  "The shared host's speed varies (2–3× between days has been seen): results written since the calibration",
  'loop (a fixed piece of JavaScript, timed as each result is written) say how fast it ran, so absolute figures',
  'of different days compare through it. Ratios within one run do not depend on it.',
  `${met} goals met, ${unmet} not.`,
  '',
  ...sections.flatMap((section) => [section, '']),
].join('\n');
writeFileSync(join(root, 'BENCHMARKS.md'), page);
process.stderr.write(
  `benchmarks: BENCHMARKS.md from ${sections.length} results (${met} goals met, ${unmet} not)\n`,
);
