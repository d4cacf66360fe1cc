import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { ApiserverEntry } from '../env-file.ts';

/**
 * The control plane's kind kubeconfig pointed at the router: the same client certificate (the router accepts
 * the control plane's client CA), the router's address and CA.
 */
export function routerKubeconfigOf(kindKubeconfig: string, server: string, caPem: string): string {
  const ca = Buffer.from(caPem, 'utf8').toString('base64');
  return kindKubeconfig
    .replace(/^(\s*)server:\s*\S+\s*$/m, `$1server: ${server}`)
    .replace(/^(\s*)certificate-authority-data:\s*\S+\s*$/m, `$1certificate-authority-data: ${ca}`);
}

/** Writes DIR/kubeconfig/router.kubeconfig for the router published on `port`; answers env.json's entry. */
export function writeRouterAccess(
  dir: string,
  controlPlaneKubeconfig: string,
  routerCaFile: string,
  port: number,
): ApiserverEntry {
  const kubeconfig = join(dir, 'kubeconfig', 'router.kubeconfig');
  const url = `https://127.0.0.1:${port}`;
  writeFileSync(
    kubeconfig,
    routerKubeconfigOf(readFileSync(controlPlaneKubeconfig, 'utf8'), url, readFileSync(routerCaFile, 'utf8')),
    { mode: 0o600 },
  );
  return { id: 'router', url, kubeconfig };
}
