import type { Logger } from 'pino';

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

/** Asks a cell's `/readyz` every period until `signal` aborts, reporting each change of health. */
export async function probeCell(
  client: Pick<KubeClient, 'request'>,
  options: ProbeOptions & {
    clock: Clock;
    log: Logger;
    signal: AbortSignal;
    onChange: (health: CellHealth) => void;
  },
): Promise<void> {
  const { clock, log, signal, onChange } = options;
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
    const changed = hysteresis.observe(ok);
    if (!ok) log.debug({ reason }, 'readyz probe failed');
    if (changed) {
      log.info({ health: changed, ...(reason ? { reason } : {}) }, `cell is ${changed}`);
      onChange(changed);
    }
    await sleep(clock, periodMs, signal);
  }
}
