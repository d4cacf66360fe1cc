// Writes each app's flags table into its README (between <!-- flags --> and <!-- /flags -->) from the flags
// its config.ts declares, so the table, the usage and the parser never disagree. `npm run docs:flags`; each
// app's config spec fails when its README is behind.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { flagsTable } from '../packages/controller-kit/src/process/flags.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const apps = [
  ['cell-router', 'ROUTER_FLAGS', []],
  ['rebalance-controller', 'REBALANCE_FLAGS', 'controller'],
  ['backup-controller', 'BACKUP_FLAGS', 'controller'],
];
const { CONTROLLER_FLAGS } = await import('../packages/controller-kit/src/process/controller-flags.ts');

for (const [app, name, common] of apps) {
  const config = await import(join(root, 'packages', app, 'src', 'config.ts'));
  const flags = [...config[name], ...(common === 'controller' ? CONTROLLER_FLAGS : [])];
  const readme = join(root, 'packages', app, 'README.md');
  const text = readFileSync(readme, 'utf8');
  const start = text.indexOf('<!-- flags -->');
  const end = text.indexOf('<!-- /flags -->');
  if (start < 0 || end < start) throw new Error(`${readme}: no <!-- flags --> … <!-- /flags --> block`);
  const block = `<!-- flags -->\n\n${flagsTable(flags)}\n\n`;
  writeFileSync(readme, text.slice(0, start) + block + text.slice(end));
  process.stdout.write(`${app}: ${flags.length} flags\n`);
}
