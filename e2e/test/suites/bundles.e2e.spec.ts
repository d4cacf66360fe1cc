import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { spawnApp, stopApp, waitUntilReady, type NodeApp } from '@cellfed/cells/apps/node-app.ts';
import { controlPlanePki } from '../helpers/router-process.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';

// What each image copies (dist/<package>, made by `nx run <package>:bundle`, which the e2e target depends
// on), started from a directory of its own — no workspace, no node_modules anywhere above it — against the
// real control plane: it must come up, answer /healthz, and turn ready. So the images' content is proven
// where no Docker engine can build the images themselves.
const DIST = fileURLToPath(new URL('../../../dist', import.meta.url));

describeE2e('the bundles the images copy', () => {
  const env = e2eEnv();
  const pki = controlPlanePki(env);
  const scratch = mkdtempSync(join(tmpdir(), 'cellfed-bundles-'));
  const started: NodeApp[] = [];
  const flags: Record<string, string[]> = {
    'cell-router': [
      ...['--host', '127.0.0.1', '--port', '0'],
      ...['--tls-cert-file', join(pki, 'apiserver.crt'), '--tls-key-file', join(pki, 'apiserver.key')],
      ...['--client-ca-file', join(pki, 'ca.crt')],
    ],
    'rebalance-controller': ['--leader-elect', 'false'],
    'backup-controller': ['--leader-elect', 'false'],
  };

  afterAll(async () => {
    for (const app of started) await stopApp(app);
    rmSync(scratch, { recursive: true, force: true });
  });

  it.each(Object.keys(flags))('%s runs from its bundle alone: /healthz, then ready', async (name) => {
    const bundle = join(DIST, name);
    expect(existsSync(join(bundle, 'main.mjs'))).toBe(true);
    const alone = join(scratch, name);
    cpSync(bundle, alone, { recursive: true });
    const app = spawnApp({
      name,
      main: join(alone, 'main.mjs'),
      args: ['--kubeconfig', env.controlPlane.kubeconfig, '--http-port', '0', ...flags[name]!],
      timeoutMs: 60_000,
    });
    started.push(app);
    const httpPort = await waitUntilReady(app);
    const health = await fetch(`http://127.0.0.1:${httpPort}/healthz`);
    expect(health.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    expect(metrics).toContain('nodejs_version_info');
    // A clean stop, as Kubernetes asks for one.
    await stopApp(app);
    expect(app.child.exitCode).toBe(0);
  });
});
