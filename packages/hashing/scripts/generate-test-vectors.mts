// Writes test-vectors.json from the built library. Run only when the algorithm changes on purpose
// (`npx nx run hashing:test-vectors`); the tests compare the library with the committed file, so an
// accidental change of the mapping fails them.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import { referenceSplitmix64 } from '../test/bigint-reference.ts';

const require = createRequire(import.meta.url);
const { HashRing, RoutingTable, hash64Hex, DEFAULT_POINTS_PER_WEIGHT } = require('../dist/index.js');

const keys = [
  '',
  'a',
  'default/web',
  'default/kubernetes',
  'kube-system/coredns',
  'shop/web',
  'shop/api',
  'shop',
  '/cluster-scoped-name',
  'team-a/payments-7f9c',
  'tenant-42/worker-0',
  'tenant-42/worker-1',
  'tenant-42/worker-2',
  'ns/a-name-that-is-exactly-long-enough-to-cross-thirty-two-bytes',
  'ns/' + 'x'.repeat(120),
  'unicode/café',
  'unicode/数据库',
  'emoji/😀',
  ...Array.from({ length: 24 }, (_, i) => `ns-${i % 5}/app-${(i * 7919).toString(36)}`),
];

const rings: Array<{ name: string; cells: Array<{ id: string; weight: number }> }> = [
  { name: 'one-cell', cells: [{ id: 'solo', weight: 1 }] },
  { name: 'three-equal', cells: ['a', 'b', 'c'].map((id) => ({ id, weight: 1 })) },
  { name: 'weighted-1-2-3-4', cells: [1, 2, 3, 4].map((weight) => ({ id: `cell-${weight}`, weight })) },
  { name: 'ten-equal', cells: Array.from({ length: 10 }, (_, i) => ({ id: `cell-${i}`, weight: 1 })) },
];

const routingSets = [
  {
    name: 'join-and-drain',
    cells: [
      ['a', 'Normal', 1],
      ['b', 'Normal', 2],
      ['c', 'Joining', 1],
      ['d', 'Draining', 1],
      ['e', 'Down', 1],
    ] as const,
  },
  {
    name: 'failover',
    cells: [
      ['a', 'Normal', 1],
      ['b', 'Down', 1],
      ['c', 'Normal', 1],
    ] as const,
  },
];

const cellIds = [...new Set(rings.flatMap((r) => r.cells.map((c) => c.id)))].sort();
const vectors = {
  algorithm: 'cellfed-ring-v1',
  about:
    'Expected outputs of @cellfed/hashing; the package README specifies the algorithm. Hashes and points are 64-bit values as 16 lowercase hex digits.',
  pointsPerWeight: DEFAULT_POINTS_PER_WEIGHT,
  hashes: keys.map((key) => ({ key, xxh64: hash64Hex(key) })),
  cellPoints: cellIds.map((id) => {
    const seed = hash64Hex(id);
    // Points from the BigInt reference, independent of the library's 32-bit code.
    const first = referenceSplitmix64(BigInt(`0x${seed}`), 3).map((p) => p.toString(16).padStart(16, '0'));
    return { cell: id, seed, first };
  }),
  rings: rings.map(({ name, cells }) => {
    const ring = HashRing.build(cells);
    return {
      name,
      cells,
      lookups: keys.map((key) => {
        const { primary, backup } = ring.locate(key);
        return { key, primary, backup: backup ?? null };
      }),
    };
  }),
  routing: routingSets.map(({ name, cells }) => {
    const table = RoutingTable.fromCellSet({
      cells: cells.map(([id, state, weight]) => ({ id, state, weight })),
      shardBy: 'name',
    });
    return {
      name,
      cells: cells.map(([id, state, weight]) => ({ id, state, weight })),
      routes: keys.map((key) => {
        const { oldCell, newCell, case: routeCase } = table.route(key);
        return { key, oldCell, newCell, case: routeCase };
      }),
    };
  }),
};

writeFileSync(new URL('../test-vectors.json', import.meta.url), JSON.stringify(vectors, null, 2) + '\n');
console.log(
  `wrote test-vectors.json: ${keys.length} keys, ${rings.length} rings, ${routingSets.length} routing sets`,
);
