import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Registry } from 'prom-client';

/** A named check: true or undefined when fine, false or a reason when not. */
export type Check = () => boolean | string | undefined;

/**
 * `/metrics` (the injected registry), `/healthz` (is the process alive) and `/readyz` (should it get
 * traffic or count as started: caches synced, leader state known). Failing checks answer 503 and name
 * themselves, like kube-apiserver's `?verbose` output.
 */
export class HealthServer {
  private readonly registry: Registry;
  private readonly health = new Map<string, Check>();
  private readonly ready = new Map<string, Check>();
  private server: Server | undefined;

  constructor(registry: Registry) {
    this.registry = registry;
  }

  addHealthCheck(name: string, check: Check): void {
    this.health.set(name, check);
  }

  addReadyCheck(name: string, check: Check): void {
    this.ready.set(name, check);
  }

  /** Listens; resolves with the bound address (port 0 picks a free port). */
  async listen(host: string, port: number): Promise<AddressInfo> {
    const server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      if (url.pathname === '/metrics') {
        this.registry
          .metrics()
          .then((text) => response.writeHead(200, { 'content-type': this.registry.contentType }).end(text))
          .catch((error: unknown) => response.writeHead(500).end(String(error)));
        return;
      }
      const checks =
        url.pathname === '/healthz' || url.pathname === '/livez'
          ? this.health
          : url.pathname === '/readyz'
            ? this.ready
            : undefined;
      if (!checks) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      const { ok, report } = runChecks(checks);
      response
        .writeHead(ok ? 200 : 503, {
          'content-type': 'text/plain; charset=utf-8',
          'cache-control': 'no-store',
        })
        .end(ok && !url.searchParams.has('verbose') ? 'ok\n' : report);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    return server.address() as AddressInfo;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function runChecks(checks: Map<string, Check>): { ok: boolean; report: string } {
  let ok = true;
  const lines: string[] = [];
  for (const [name, check] of checks) {
    let result: boolean | string | undefined;
    try {
      result = check();
    } catch (error) {
      result = String(error);
    }
    if (result === true || result === undefined) {
      lines.push(`[+]${name} ok`);
    } else {
      ok = false;
      lines.push(`[-]${name} failed${typeof result === 'string' ? `: ${result}` : ''}`);
    }
  }
  lines.push(ok ? 'check passed' : 'check failed');
  return { ok, report: `${lines.join('\n')}\n` };
}
