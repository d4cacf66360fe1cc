import type { Logger } from 'pino';
import { METADATA } from '@cellfed/federation';

import { sleep, type Clock } from '../clock.ts';
import { errorMessage } from '../errors.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { HealthHysteresis, type CellHealth, type HysteresisOptions } from './health-hysteresis.ts';

export interface ProbeOptions extends HysteresisOptions {
  /** Time between probes. Default 2 s. */
  periodMs?: number;
  /** A probe not answered in this long failed. Default 2 s. */
  timeoutMs?: number;
}

/**
 * Asks a cell's `/readyz` every period until `signal` aborts, reporting each change of health. With
 * `onReplaced`, it also tells when the apiserver that answers keeps other data than before: the uid of its
 * `kube-system` namespace, read at the first good answer and again at each good answer after a failed one,
 * changed (its etcd was wiped or replaced). Every watch of such a cell holds versions it never issued.
 */
export async function probeCell(
  client: Pick<KubeClient, 'request'>,
  options: ProbeOptions & {
    clock: Clock;
    log: Logger;
    signal: AbortSignal;
    onChange: (health: CellHealth) => void;
    onReplaced?: () => void;
  },
): Promise<void> {
  const { clock, log, signal, onChange, onReplaced } = options;
  let identity: string | undefined;
  let failedSinceIdentity = false;
  const periodMs = options.periodMs ?? 2000;
  const timeoutMs = options.timeoutMs ?? 2000;
  const hysteresis = new HealthHysteresis(options);
  while (!signal.aborted) {
    let ok = true;
    let reason: string | undefined;
    const timeout = new AbortController();
    const timer = clock.setTimer(timeoutMs, () => timeout.abort(new Error(`no answer in ${timeoutMs} ms`)));
    const abortProbe = () => timeout.abort(signal.reason);
    signal.addEventListener('abort', abortProbe, { once: true });
    try {
      await client.request('GET', '/readyz', { signal: timeout.signal, accept: 'text/plain', timeoutMs });
    } catch (error) {
      ok = false;
      reason =
        timeout.signal.aborted && !signal.aborted ? `no answer in ${timeoutMs} ms` : errorMessage(error);
    } finally {
      timer.cancel();
      signal.removeEventListener('abort', abortProbe);
    }
    if (signal.aborted) return;
    if (!ok) failedSinceIdentity = true;
    else if (onReplaced && (identity === undefined || failedSinceIdentity)) {
      const uid = await kubeSystemUid(client, timeoutMs, signal);
      if (uid !== undefined) {
        if (identity !== undefined && uid !== identity) {
          log.info({ was: identity, now: uid }, 'the cell answers with other storage than before');
          onReplaced();
        }
        identity = uid;
        failedSinceIdentity = false;
      }
    }
    const changed = hysteresis.observe(ok);
    if (!ok) log.debug({ reason }, 'readyz probe failed');
    if (changed) {
      log.info({ health: changed, ...(reason ? { reason } : {}) }, `cell is ${changed}`);
      onChange(changed);
    }
    await sleep(clock, periodMs, signal);
  }
}

/** The uid of the cell's `kube-system` namespace; undefined when it cannot be read now. */
async function kubeSystemUid(
  client: Pick<KubeClient, 'request'>,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<string | undefined> {
  try {
    const namespace = await client.request<{ metadata?: { uid?: string } }>(
      'GET',
      '/api/v1/namespaces/kube-system',
      {
        accept: METADATA,
        timeoutMs,
        signal,
      },
    );
    return namespace.metadata?.uid;
  } catch {
    return undefined;
  }
}
