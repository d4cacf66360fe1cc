import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  CELL_COMPONENTS,
  cellUserArgs,
  credentialsNamespace,
  localCellUser,
} from '../chart/cell-identities.ts';
import { spawnApp, stopApp, waitUntilReady } from '../apps/node-app.ts';
import { CONTROL_PLANE_ID, componentKubeconfig, type EnvFile } from '../env-file.ts';

const ROUTER_MAIN = fileURLToPath(new URL('../../../../packages/cell-router/src/main.ts', import.meta.url));

export interface RouterProcess {
  url: string;
  httpPort: number;
  /** Its JSON log lines so far. */
  lines: Record<string, unknown>[];
  child: ChildProcess;
}

export interface StartRouterOptions {
  /** More router flags, e.g. `--cellset x`. */
  args?: string[];
  /** The API port; 0 (default) picks a free one. */
  port?: number;
  /** The cells that must be engaged before it counts as started (default: every cell of the environment). */
  cells?: string[];
  /** Serve the certificate of this kubernetes.io/tls Secret (`namespace/name`) instead of the PKI files. */
  tlsSecret?: string;
  /** Also append its log lines to this file. */
  logFile?: string;
  /** How many of its latest log lines to keep in memory (all by default). */
  keepLines?: number;
  timeoutMs?: number;
}

/** The control plane's PKI directory: the router serves with its loopback certificate and trusts its CA. */
export const controlPlanePki = (env: EnvFile) => join(env.dir, 'pki', CONTROL_PLANE_ID);

/**
 * The router (packages/cell-router) as its own process in front of an environment, as it runs for real:
 * resolves once it is ready with the cells engaged; a router that does not get there is stopped and the
 * error says why.
 */
export async function startRouter(env: EnvFile, options: StartRouterOptions = {}): Promise<RouterProcess> {
  const pki = controlPlanePki(env);
  const app = spawnApp({
    name: 'router',
    main: ROUTER_MAIN,
    args: [
      '--kubeconfig',
      componentKubeconfig(env, 'router'),
      '--credentials-namespace',
      credentialsNamespace('router'),
      // Who cellfed's components are in the cells, as the chart gives them: no caller is served as one.
      ...cellUserArgs(localCellUser, CELL_COMPONENTS),
      '--host',
      '127.0.0.1',
      '--port',
      String(options.port ?? 0),
      '--http-port',
      '0',
      // The control plane's loopback certificate, and its CA for client certificates: the admin kubeconfig
      // then works against the router with only the server changed.
      ...(options.tlsSecret
        ? ['--tls-secret', options.tlsSecret]
        : ['--tls-cert-file', join(pki, 'apiserver.crt'), '--tls-key-file', join(pki, 'apiserver.key')]),
      '--client-ca-file',
      join(pki, 'ca.crt'),
      // Every request's access-log line (debug): tests read them.
      '--log-level',
      'debug',
      ...(options.args ?? []),
    ],
    ...(options.logFile ? { logFile: options.logFile } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.keepLines !== undefined ? { keepLines: options.keepLines } : {}),
  });
  const { lines, child } = app;
  const cells = options.cells ?? env.cells.map((cell) => cell.id);
  try {
    const port = await app.waitFor(
      'listening',
      () => lines.find((line) => line.msg === 'serving the Kubernetes API')?.port as number | undefined,
    );
    const httpPort = await waitUntilReady(app);
    await app.waitFor(`cells ${cells.join(', ')} to be engaged`, () =>
      cells.every((cell) => lines.some((line) => line.msg === 'cell engaged' && line.cell === cell))
        ? true
        : undefined,
    );
    return { url: `https://127.0.0.1:${port}`, httpPort, lines, child };
  } catch (error) {
    await stopRouter({ child });
    throw error;
  }
}

/** SIGTERM, and wait for the router to exit (nothing to do if it never started or already ended). */
export const stopRouter = (router: { child: ChildProcess } | undefined): Promise<void> => stopApp(router);

/** The control plane's admin kubeconfig pointed at the router, written to `file`. */
export function writeRouterKubeconfig(env: EnvFile, routerUrl: string, file: string): string {
  const config = JSON.parse(readFileSync(env.controlPlane.kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string } }[];
  };
  config.clusters.forEach((cluster) => (cluster.cluster.server = routerUrl));
  writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 });
  return file;
}
