import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import { CONTROL_PLANE_ID, type EnvFile } from '../env-file.ts';
import { E2eError, E2eErrorCode } from '../errors.ts';

const ROUTER_MAIN = fileURLToPath(new URL('../../../packages/cell-router/src/main.ts', import.meta.url));

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
  const child = spawn(
    process.execPath,
    [
      ROUTER_MAIN,
      '--kubeconfig',
      env.controlPlane.kubeconfig,
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
      ...(options.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: Record<string, unknown>[] = [];
  const file = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    file?.write(chunk);
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    file?.write(`${line}\n`);
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log line
    }
  });
  child.once('exit', () => file?.end());
  const cells = options.cells ?? env.cells.map((cell) => cell.id);
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const wait = async <T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> => {
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (child.exitCode !== null) {
        // Its own last word: a fatal log line (listen failed) or stderr (bad flags).
        const fatal = lines.findLast((line) => Number(line.level) >= 50);
        const reason = fatal
          ? `${String(fatal.msg)}: ${String(fatal.err ?? '')}`
          : stderr.trim().split('\n')[0];
        throw new E2eError(
          E2eErrorCode.ProcessExited,
          `the router exited with ${child.exitCode} before ${what}: ${reason ?? ''}`,
        );
      }
      if (Date.now() > deadline)
        throw new E2eError(E2eErrorCode.NotReady, `the router timed out waiting for ${what}`);
      await sleep(100);
    }
  };
  try {
    const port = await wait(
      'listening',
      () => lines.find((line) => line.msg === 'serving the Kubernetes API')?.port as number | undefined,
    );
    const httpPort = await wait(
      'its health server',
      () => lines.find((line) => line.httpPort !== undefined)?.httpPort as number | undefined,
    );
    await wait('readiness', async () => {
      const response = await fetch(`http://127.0.0.1:${httpPort}/readyz`).catch(() => undefined);
      return response?.status === 200 ? true : undefined;
    });
    await wait(`cells ${cells.join(', ')} to be engaged`, () =>
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
export async function stopRouter(router: { child: ChildProcess } | undefined): Promise<void> {
  const child = router?.child;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** The control plane's admin kubeconfig pointed at the router, written to `file`. */
export function writeRouterKubeconfig(env: EnvFile, routerUrl: string, file: string): string {
  const config = JSON.parse(readFileSync(env.controlPlane.kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string } }[];
  };
  config.clusters.forEach((cluster) => (cluster.cluster.server = routerUrl));
  writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 });
  return file;
}
