import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { CONTROL_PLANE_ID, type EnvFile } from '../src/env-file.ts';
import { eventually } from './clients.ts';

const ROUTER_MAIN = fileURLToPath(new URL('../../packages/cell-router/src/main.ts', import.meta.url));

export interface RouterProcess {
  url: string;
  httpPort: number;
  /** Its JSON log lines so far. */
  lines: Record<string, unknown>[];
  child: ChildProcess;
}

/** The control plane's PKI directory: the router serves with its loopback certificate and trusts its CA. */
export const controlPlanePki = (env: EnvFile) => join(env.dir, 'pki', CONTROL_PLANE_ID);

/**
 * The router as a process, as it runs for real, ready and with `cells` (default: every cell of the
 * environment) engaged. A router that does not get there is stopped before the error is thrown.
 */
export async function startRouter(
  env: EnvFile,
  extraArgs: string[] = [],
  cells: string[] = env.cells.map((cell) => cell.id),
): Promise<RouterProcess> {
  const pki = controlPlanePki(env);
  const child = spawn(
    process.execPath,
    [
      ROUTER_MAIN,
      '--kubeconfig',
      env.controlPlane.kubeconfig,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--http-port',
      '0',
      // The control plane's loopback certificate, and its CA for client certificates: the admin kubeconfig
      // then works against the router with only the server changed.
      '--tls-cert-file',
      join(pki, 'apiserver.crt'),
      '--tls-key-file',
      join(pki, 'apiserver.key'),
      '--client-ca-file',
      join(pki, 'ca.crt'),
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log line
    }
  });
  try {
    return await untilReady(child, lines, cells);
  } catch (error) {
    await stopRouter({ child });
    throw error;
  }
}

async function untilReady(
  child: ChildProcess,
  lines: Record<string, unknown>[],
  cells: string[],
): Promise<RouterProcess> {
  const port = await eventually(
    'the router to listen',
    async () => lines.find((line) => line.msg === 'serving the Kubernetes API')?.port as number | undefined,
  );
  const httpPort = await eventually(
    'the router health server',
    async () => lines.find((line) => line.httpPort !== undefined)?.httpPort as number | undefined,
  );
  await eventually('the router to be ready', async () => {
    const response = await fetch(`http://127.0.0.1:${httpPort}/readyz`).catch(() => undefined);
    return response?.status === 200 ? true : undefined;
  });
  await eventually('every cell to be engaged', async () =>
    cells.every((cell) => lines.some((line) => line.msg === 'cell engaged' && line.cell === cell))
      ? true
      : undefined,
  );
  return { url: `https://127.0.0.1:${port}`, httpPort, lines, child };
}

/** SIGTERM, and wait for the router to exit (nothing to do if it never started or already ended). */
export async function stopRouter(router: { child: ChildProcess } | undefined): Promise<void> {
  const child = router?.child;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** The control plane's admin kubeconfig pointed at the router, written to `file`. */
export function routerKubeconfig(env: EnvFile, router: RouterProcess, file: string): string {
  const config = JSON.parse(readFileSync(env.controlPlane.kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string } }[];
  };
  config.clusters.forEach((cluster) => (cluster.cluster.server = router.url));
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** The kubectl built from modules, with its exit code and combined output. */
export function kubectl(
  kubeconfig: string,
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      join(process.env['CELLFED_TOOLS_BIN']!, 'kubectl'),
      ['--kubeconfig', kubeconfig, ...args],
      {
        env: { ...process.env, ...options.env },
      },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) => resolve({ code, out }));
    child.stdin.end(options.input ?? '');
  });
}
