// Benchmark of @cellfed/hashing beside the `hashring` npm package, in one run, on the same keys.
// Usage: node bench/hashing-bench.mts [--keys N] [--out FILE]   (npx nx run hashing:bench)
// Writes { figures, goals, ... } to bench/results/hashing.json at the repository root unless --out is given.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const { HashRing, DEFAULT_POINTS_PER_WEIGHT } = require('../dist/index.js');
const HashRingNpm = require('hashring');

const { values: args } = parseArgs({
  options: {
    keys: { type: 'string', default: '1000000' },
    out: { type: 'string' },
    runs: { type: 'string', default: '5' },
  },
});
const KEYS = Number(args.keys);
const RUNS = Number(args.runs);
const out = resolve(
  args.out ?? join(import.meta.dirname, '..', '..', '..', 'bench', 'results', 'hashing.json'),
);
const progress = (message: string) => process.stderr.write(`[hashing-bench] ${message}\n`);

/** Deterministic random `namespace/name` keys (xorshift32). */
function makeKeys(count: number, seed: number): string[] {
  let s = seed;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
  const keys = new Array<string>(count);
  // Flattened strings, as a router would see after parsing a request path.
  for (let i = 0; i < count; i++)
    keys[i] = `ns-${next() % 2000}/app-${next().toString(36)}-${next() % 100}`.split('').join('');
  return keys;
}

// Collect garbage between timed sections (node --expose-gc) so one library's garbage is not billed to the other.
const collect = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const nsPerKey = (fn: () => void, count: number) => {
  collect();
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / count;
};
const cellsOf = (n: number, weight = 1) => Array.from({ length: n }, (_, i) => ({ id: `cell-${i}`, weight }));
const countBy = (keys: string[], place: (key: string) => string) => {
  const counts = new Map<string, number>();
  for (const key of keys) {
    const cell = place(key);
    counts.set(cell, (counts.get(cell) ?? 0) + 1);
  }
  return counts;
};
const maxOverMean = (counts: Map<string, number>, cells: number) =>
  Math.max(...counts.values()) / (KEYS / cells);

progress(`generating ${KEYS} keys`);
const keys = makeKeys(KEYS, 0x9e3779b9);
let sink = 0;

// --- Lookup speed, 10 equal cells, both libraries on the same keys -------------------------------------------
const ring10 = HashRing.build(cellsOf(10));
const servers10 = Object.fromEntries(cellsOf(10).map((c) => [c.id, 1]));
// Warm-up: let V8 optimize both libraries before anything is timed.
const warmup = new HashRingNpm(servers10);
for (let i = 0; i < Math.min(KEYS, 200_000); i++)
  sink +=
    ring10.locate(keys[i]!).primary.length + ring10.lookup(keys[i]!).length + warmup.get(keys[i]!).length;
const lookupRuns: number[] = [];
const locateRuns: number[] = [];
const hashringRuns: number[] = [];
for (let run = 0; run < RUNS; run++) {
  progress(`lookup run ${run + 1}/${RUNS}`);
  lookupRuns.push(
    nsPerKey(() => {
      for (let i = 0; i < KEYS; i++) sink += ring10.lookup(keys[i]!).length;
    }, KEYS),
  );
  locateRuns.push(
    nsPerKey(() => {
      for (let i = 0; i < KEYS; i++) sink += ring10.locate(keys[i]!).primary.length;
    }, KEYS),
  );
  // A fresh hashring each run: every key is new to its cache, as for a router seeing many distinct objects.
  const hashring = new HashRingNpm(servers10);
  hashringRuns.push(
    nsPerKey(() => {
      for (let i = 0; i < KEYS; i++) sink += hashring.get(keys[i]!).length;
    }, KEYS),
  );
}
const lookupNs = median(lookupRuns);
const lookupWithBackupNs = median(locateRuns);
const hashringLookupNs = median(hashringRuns);

// --- Balance ---------------------------------------------------------------------------------------------------
progress('balance, 10 equal cells');
const maxOverMean10 = maxOverMean(
  countBy(keys, (k) => ring10.lookup(k)),
  10,
);
const hashringForBalance = new HashRingNpm(servers10);
const hashringMaxOverMean10 = maxOverMean(
  countBy(keys, (k) => hashringForBalance.get(k)),
  10,
);

// --- Movement: 10 → 11 cells, and 10 → 9 -----------------------------------------------------------------------
progress('movement, 10 → 11 and 10 → 9 cells');
const ring11 = HashRing.build(cellsOf(11));
const ring9 = HashRing.build(cellsOf(9));
let movedAdd = 0;
let movedBetweenSurvivors = 0;
for (const key of keys) {
  const before = ring10.lookup(key);
  const added = ring11.lookup(key);
  if (added !== before) {
    movedAdd++;
    if (added !== 'cell-10') movedBetweenSurvivors++;
  }
  const removed = ring9.lookup(key);
  if (before !== 'cell-9' && removed !== before) movedBetweenSurvivors++;
}
const movedOverOptimalAdd = movedAdd / (KEYS / 11);

// --- Weights 1, 2, 3, 4 ----------------------------------------------------------------------------------------
progress('weights 1, 2, 3, 4');
const weights = [1, 2, 3, 4];
const weighted = HashRing.build(weights.map((weight, i) => ({ id: `w${i}`, weight })));
const weightedCounts = countBy(keys, (k) => weighted.lookup(k));
const weightedShareError = Math.max(
  ...weights.map((w, i) => Math.abs((weightedCounts.get(`w${i}`) ?? 0) / KEYS - w / 10) / (w / 10)),
);

// --- Rebuild ---------------------------------------------------------------------------------------------------
progress('rebuild, 100 cells');
const rebuilds: number[] = [];
for (let run = 0; run < 7; run++) {
  const start = process.hrtime.bigint();
  sink += HashRing.build(cellsOf(100)).pointCount;
  rebuilds.push(Number(process.hrtime.bigint() - start) / 1e6);
}
const rebuildMs100 = median(rebuilds);

const round = (x: number, digits = 4) => Number(x.toFixed(digits));
const figures = {
  lookupNs: round(lookupNs, 1),
  lookupWithBackupNs: round(lookupWithBackupNs, 1),
  hashringLookupNs: round(hashringLookupNs, 1),
  speedupVsHashring: round(hashringLookupNs / lookupNs, 2),
  maxOverMean10: round(maxOverMean10),
  hashringMaxOverMean10: round(hashringMaxOverMean10),
  movedOverOptimalAdd: round(movedOverOptimalAdd),
  movedBetweenSurvivors,
  weightedShareError: round(weightedShareError),
  rebuildMs100: round(rebuildMs100, 2),
};
const goals = {
  speedupVsHashring: { goal: '>= 10', met: figures.speedupVsHashring >= 10 },
  lookupWithBackupNs: { goal: '<= 500', met: figures.lookupWithBackupNs <= 500 },
  maxOverMean10: { goal: '<= 1.05', met: figures.maxOverMean10 <= 1.05 },
  movedOverOptimalAdd: { goal: '<= 1.05', met: figures.movedOverOptimalAdd <= 1.05 },
  movedBetweenSurvivors: { goal: '= 0', met: figures.movedBetweenSurvivors === 0 },
  weightedShareError: { goal: '<= 0.05', met: figures.weightedShareError <= 0.05 },
  rebuildMs100: { goal: '<= 50', met: figures.rebuildMs100 <= 50 },
};
const result = {
  benchmark: 'hashing',
  baseline: `hashring@${require('hashring/package.json').version} (md5, default options)`,
  keys: KEYS,
  runs: RUNS,
  pointsPerWeight: DEFAULT_POINTS_PER_WEIGHT,
  node: process.version,
  cpu: cpus()[0]?.model ?? 'unknown',
  date: new Date().toISOString(),
  figures,
  goals,
  samples: {
    lookupNs: lookupRuns.map((x) => round(x, 1)),
    lookupWithBackupNs: locateRuns.map((x) => round(x, 1)),
    hashringLookupNs: hashringRuns.map((x) => round(x, 1)),
    rebuildMs100: rebuilds.map((x) => round(x, 2)),
  },
  sink: sink > 0,
};
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
for (const [name, value] of Object.entries(figures)) {
  const goal = (goals as Record<string, { goal: string; met: boolean }>)[name];
  console.log(
    `${name.padEnd(24)} ${String(value).padStart(12)}${goal ? `   goal ${goal.goal}: ${goal.met ? 'met' : 'NOT MET'}` : ''}`,
  );
}
console.log(`wrote ${out}`);
