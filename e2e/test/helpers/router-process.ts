import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';

import type { EnvFile } from '@cellfed/cells/env-file.ts';
import {
  controlPlanePki,
  writeRouterKubeconfig,
  type RouterProcess,
} from '@cellfed/cells/router/router-process.ts';

export { controlPlanePki, startRouter, stopRouter } from '@cellfed/cells/router/router-process.ts';
export type { RouterProcess } from '@cellfed/cells/router/router-process.ts';

/** The control plane's admin kubeconfig pointed at the router, written to `file`. */
export const routerKubeconfig = (env: EnvFile, router: RouterProcess, file: string) =>
  writeRouterKubeconfig(env, router.url, file);

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

/** A raw TLS connection to the router as the control plane's admin, for requests no client library sends. */
export async function adminSocket(env: EnvFile, router: RouterProcess): Promise<TLSSocket> {
  const pki = controlPlanePki(env);
  const socket = connect({
    host: '127.0.0.1',
    port: Number(new URL(router.url).port),
    ca: readFileSync(join(pki, 'ca.crt')),
    cert: readFileSync(join(pki, 'admin.crt')),
    key: readFileSync(join(pki, 'admin.key')),
    servername: 'localhost',
  });
  await new Promise((resolve) => socket.once('secureConnect', resolve));
  return socket;
}
