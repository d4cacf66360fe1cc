import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// What a user gets from `npm install @cellfed/hashing`: pack the package, install the tarball into a scratch
// project offline (it has no dependencies), then use it from CommonJS, from an ES module, and from
// TypeScript.
const packageDir = join(__dirname, '..');
const workspaceRoot = join(packageDir, '..', '..');
const vectors = JSON.parse(readFileSync(join(packageDir, 'test-vectors.json'), 'utf8')) as {
  rings: Array<{
    name: string;
    cells: unknown[];
    lookups: Array<{ key: string; primary: string; backup: string | null }>;
  }>;
};
const threeEqual = vectors.rings.find((r) => r.name === 'three-equal')!;
const expected = threeEqual.lookups[2]!;

const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('the packed package', () => {
  let scratch: string;
  let files: string[];

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'cellfed-hashing-pack-'));
    const packed = JSON.parse(
      run('npm', ['pack', '--json', '--pack-destination', scratch], packageDir),
    ) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    files = packed[0]!.files.map((f) => f.path);
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true }));
    run(
      'npm',
      [
        ...['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'],
        `./${packed[0]!.filename}`,
      ],
      scratch,
    );
  }, 180_000);

  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('ships the build, the types, the README and the test vectors, and nothing else', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'CHANGELOG.md',
        'test-vectors.json',
        'dist/index.js',
        'dist/index.d.ts',
      ]),
    );
    expect(files.filter((f) => /(^src\/|^test\/|\.spec\.|^conformance\/|\.map$)/.test(f))).toEqual([]);
  });

  it('works from CommonJS', () => {
    const script = `const { HashRing } = require('@cellfed/hashing');
      const ring = HashRing.build(${JSON.stringify(threeEqual.cells)});
      process.stdout.write(JSON.stringify(ring.locate(${JSON.stringify(expected.key)})));`;
    expect(JSON.parse(run(process.execPath, ['-e', script], scratch))).toEqual({
      primary: expected.primary,
      backup: expected.backup,
    });
  });

  it('works from an ES module with named imports, and exposes the test vectors', () => {
    writeFileSync(
      join(scratch, 'check.mjs'),
      `import { HashRing, RoutingTable } from '@cellfed/hashing';
       import { createRequire } from 'node:module';
       const vectors = createRequire(import.meta.url)('@cellfed/hashing/test-vectors.json');
       const route = RoutingTable.fromCellSet({ cells: [{ id: 'a', state: 'Normal', weight: 1 }], shardBy: 'name' }).route('x/y');
       const ring = HashRing.build(${JSON.stringify(threeEqual.cells)});
       console.log(JSON.stringify({ primary: ring.lookup(${JSON.stringify(expected.key)}), route: route.case, algorithm: vectors.algorithm }));`,
    );
    expect(JSON.parse(run(process.execPath, ['check.mjs'], scratch))).toEqual({
      primary: expected.primary,
      route: 4,
      algorithm: 'cellfed-ring-v1',
    });
  });

  it('type-checks from TypeScript', () => {
    writeFileSync(
      join(scratch, 'check.ts'),
      `import { HashRing, HashingError, type RoutingCells, type RouteDecision } from '@cellfed/hashing';
       const ring: HashRing = HashRing.build([{ id: 'a', weight: 2 }]);
       const primary: string = ring.lookup('ns/name');
       const spec: RoutingCells = { cells: [{ id: 'a', state: 'Joining', weight: 2 }], shardBy: 'namespace' };
       const decision: RouteDecision | undefined = undefined;
       const error = new HashingError('CELLFED_EMPTY_RING', 'x');
       export { primary, spec, decision, error };`,
    );
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          types: [],
        },
        files: ['check.ts'],
      }),
    );
    run(
      process.execPath,
      [join(workspaceRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
      scratch,
    );
  });
});
