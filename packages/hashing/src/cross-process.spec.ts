import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';

import { sampleKeys } from '../test/arbitraries';
import { HashRing } from './ring';

// Placement must be a pure function of (cells, key): the same in every process, whatever V8 tier runs it
// (--jitless interprets everything, --no-opt stays in the baseline tiers), and the same from the built
// package as from the sources.
const cells = [
  { id: 'cell-a', weight: 1 },
  { id: 'cell-b', weight: 2 },
  { id: 'cell-c', weight: 3 },
  { id: 'cell-d', weight: 1 },
];
const KEY_COUNT = 20_000;

const digestScript = `
const { HashRing } = require(${JSON.stringify(join(__dirname, '..', 'dist', 'index.js'))});
const { createHash } = require('node:crypto');
const ring = HashRing.build(${JSON.stringify(cells)});
let s = 1;
const next = () => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return s >>> 0; };
const digest = createHash('sha256');
for (let i = 0; i < ${KEY_COUNT}; i++) {
  const key = 'ns-' + (next() % 1000) + '/app-' + next().toString(36);
  const p = ring.locate(key);
  digest.update(key + '=' + p.primary + ',' + p.backup + '\\n');
}
process.stdout.write(digest.digest('hex'));
`;

function digestHere(): string {
  const ring = HashRing.build(cells);
  const digest = createHash('sha256');
  for (const key of sampleKeys(KEY_COUNT, 1)) {
    const p = ring.locate(key);
    digest.update(`${key}=${p.primary},${p.backup}\n`);
  }
  return digest.digest('hex');
}

describe('placement across processes', () => {
  const expected = digestHere();

  it.each([[[]], [['--jitless']], [['--no-opt', '--no-sparkplug']], [['--max-semi-space-size=1']]])(
    'is identical in a separate node process with flags %j',
    (flags: string[]) => {
      const output = execFileSync(process.execPath, [...flags, '-e', digestScript], { encoding: 'utf8' });
      expect(output).toBe(expected);
    },
  );
});
