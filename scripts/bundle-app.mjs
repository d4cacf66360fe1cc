// Bundles one deployable package into dist/<package>/: main.mjs (its src/main.ts and every module it imports,
// production code only, one file), its source map, the licenses of what went in, and a package.json. The
// directory runs alone with Node.js 24 (`node main.mjs`): it is what each package's image copies.
//   node scripts/bundle-app.mjs cell-router
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const name = process.argv[2];
// Each deployable package is bundled for its image into dist/<package>/main.mjs; the kubectl plugin, which is
// published to npm as one file, into its own dist/kubectl-cells.mjs (with a shebang, as npm links it).
const BUNDLES = {
  'cell-router': { out: join(root, 'dist', 'cell-router'), file: 'main.mjs' },
  'rebalance-controller': { out: join(root, 'dist', 'rebalance-controller'), file: 'main.mjs' },
  'backup-controller': { out: join(root, 'dist', 'backup-controller'), file: 'main.mjs' },
  'kubectl-cells': {
    out: join(root, 'packages', 'kubectl-cells', 'dist'),
    file: 'kubectl-cells.mjs',
    cli: true,
  },
};
const bundle = BUNDLES[name];
if (!bundle) {
  process.stderr.write(
    `bundle-app: give one of ${Object.keys(BUNDLES).join(', ')}; got ${name ?? 'nothing'}\n`,
  );
  process.exit(2);
}
const packageDir = join(root, 'packages', name);
const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const out = bundle.out;
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: [join(packageDir, 'src/main.ts')],
  outfile: join(out, bundle.file),
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  sourcemap: 'linked',
  legalComments: 'linked',
  metafile: true,
  // The published library is its compiled dist/; the bundle takes its sources, so nothing is built first.
  alias: { '@cellfed/hashing': join(root, 'packages/hashing/src/index.ts') },
  logLevel: 'warning',
  // CommonJS dependencies (pino, prom-client, …) call require(): give the ES module one. A command line
  // bundle starts with its shebang, as npm links it into PATH.
  banner: {
    js: `${bundle.cli ? '#!/usr/bin/env node\n' : ''}import { createRequire as cellfedRequire } from 'node:module'; const require = cellfedRequire(import.meta.url);`,
  },
});
if (bundle.cli) chmodSync(join(out, bundle.file), 0o755);
else
  writeFileSync(
    join(out, 'package.json'),
    `${JSON.stringify(
      {
        name: manifest.name,
        version: manifest.version,
        description: manifest.description,
        license: manifest.license,
        type: 'module',
        private: true,
        engines: { node: '>=24' },
        main: 'main.mjs',
      },
      null,
      2,
    )}\n`,
  );
const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
const inputs = Object.keys(result.metafile.inputs).length;
process.stderr.write(`bundle-app: ${name}: ${inputs} modules → ${out} (${Math.round(bytes / 1024)} KiB)\n`);
