import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { Agent, request } from 'undici';

import { E2eError, E2eErrorCode } from '../errors.ts';

export interface ProbeTarget {
  /** e.g. `cell-1/kube-apiserver`, for messages. */
  name: string;
  url: string;
  /**
   * Client TLS for an apiserver; `selfSigned` for a loopback health port served with a certificate the
   * process made for itself in memory (nothing to verify it by); none for etcd's plain HTTP.
   */
  tls?: { caFile: string; certFile: string; keyFile: string } | 'selfSigned';
}

export interface WaitOptions {
  timeoutMs: number;
  /** Checked between probes: a daemon that died fails the wait at once instead of timing out. */
  stillRunning?: () => void;
  signal?: AbortSignal;
  intervalMs?: number;
}

/** Polls `url` until it answers 200 (`/readyz` of kube-apiserver or etcd, `/healthz` of a controller manager). */
export async function waitUntilReady(target: ProbeTarget, options: WaitOptions): Promise<void> {
  const { tls } = target;
  const agent = new Agent({
    connect:
      tls === 'selfSigned'
        ? { rejectUnauthorized: false }
        : tls
          ? { ca: readFileSync(tls.caFile), cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }
          : {},
    connectTimeout: 2_000,
  });
  const deadline = Date.now() + options.timeoutMs;
  let last: string;
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      options.stillRunning?.();
      try {
        const response = await request(target.url, {
          dispatcher: agent,
          headersTimeout: 5_000,
          bodyTimeout: 5_000,
          signal: options.signal,
        });
        const body = await response.body.text();
        if (response.statusCode === 200) return;
        last = `HTTP ${response.statusCode}: ${
          body
            .trim()
            .split('\n')
            .filter((line) => line.includes('[-]'))
            .join(', ') || body.trim().slice(0, 200)
        }`;
      } catch (error) {
        options.signal?.throwIfAborted();
        last = (error as Error).message;
      }
      if (Date.now() >= deadline) {
        throw new E2eError(
          E2eErrorCode.NotReady,
          `${target.name} not ready after ${Math.round(options.timeoutMs / 1000)} s at ${target.url} (last: ${last})`,
        );
      }
      await sleep(options.intervalMs ?? 200, undefined, { signal: options.signal });
    }
  } finally {
    await agent.close();
  }
}
