import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The benchmark itself runs with `npx nx run hashing:bench` (1M keys); this proves it runs from the repo and
// writes every figure the issue names, on a small key set so the test stays quick.
const FIGURES = [
  'lookupNs',
  'lookupWithBackupNs',
  'hashringLookupNs',
  'speedupVsHashring',
  'maxOverMean10',
  'hashringMaxOverMean10',
  'movedOverOptimalAdd',
  'movedBetweenSurvivors',
  'weightedShareError',
  'rebuildMs100',
];

describe('hashing benchmark', () => {
  it('writes every figure as JSON', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cellfed-bench-'));
    try {
      const out = join(dir, 'hashing.json');
      execFileSync(
        process.execPath,
        ['--expose-gc', 'bench/hashing-bench.mts', '--keys', '20000', '--runs', '1', '--out', out],
        {
          cwd: join(__dirname, '..'),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const result = JSON.parse(readFileSync(out, 'utf8')) as {
        figures: Record<string, number>;
        keys: number;
      };
      expect(Object.keys(result.figures).sort()).toEqual([...FIGURES].sort());
      for (const name of FIGURES) expect(Number.isFinite(result.figures[name])).toBe(true);
      expect(result.keys).toBe(20000);
      // Deterministic figures hold on any machine.
      expect(result.figures.movedBetweenSurvivors).toBe(0);
      expect(result.figures.lookupNs).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
