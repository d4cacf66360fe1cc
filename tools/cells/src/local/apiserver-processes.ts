import { join } from 'node:path';

import { E2eError } from '../errors.ts';
import {
  exitedError,
  isRunning,
  startDaemon,
  stopDaemon,
  tailLog,
  type DaemonRecord,
  type DaemonSpec,
} from './daemon.ts';
import type { ApiserverState, Component } from './local-state.ts';
import { waitUntilReady, type ProbeTarget } from './readiness.ts';

/** How long each component may take to become ready; a 2-core machine starts four apiservers at once. */
export const READY_TIMEOUT_MS: Record<Component, number> = {
  etcd: 30_000,
  'kube-apiserver': 90_000,
  'kube-controller-manager': 60_000,
};

export interface StartOptions {
  signal?: AbortSignal;
  /** Called with the record as soon as the process exists, before it is ready: the caller persists it. */
  onStarted: (record: DaemonRecord) => void;
}

/** Where each component answers when it is ready. */
export function probeFor(apiserver: ApiserverState, component: Component): ProbeTarget {
  const name = `${apiserver.id}/${component}`;
  const tls = {
    caFile: join(apiserver.pkiDir, 'ca.crt'),
    certFile: join(apiserver.pkiDir, 'admin.crt'),
    keyFile: join(apiserver.pkiDir, 'admin.key'),
  };
  switch (component) {
    case 'etcd':
      return { name, url: `http://127.0.0.1:${apiserver.etcdClientPort}/readyz` };
    case 'kube-apiserver':
      return { name, url: `${apiserver.url}/readyz`, tls };
    case 'kube-controller-manager':
      // It serves no port here; its service-account controller creating `default` shows its controllers run.
      return { name, url: `${apiserver.url}/api/v1/namespaces/default/serviceaccounts/default`, tls };
  }
}

/** Starts one component and waits until it is ready; a crash fails at once with the end of its log. */
export async function startComponent(
  apiserver: ApiserverState,
  component: Component,
  spec: DaemonSpec,
  options: StartOptions,
): Promise<DaemonRecord> {
  const record = startDaemon(spec);
  options.onStarted(record);
  await waitUntilReady(probeFor(apiserver, component), {
    timeoutMs: READY_TIMEOUT_MS[component],
    signal: options.signal,
    stillRunning: () => {
      if (!isRunning(record)) throw exitedError(record);
    },
  });
  return record;
}

/** True when a component failed because another process took its port between choosing and binding it. */
export function lostPortRace(error: unknown, record: DaemonSpec | undefined): boolean {
  return (
    error instanceof E2eError &&
    record !== undefined &&
    /address already in use/i.test(tailLog(record.logFile, 50))
  );
}

/** Stops an apiserver's processes, dependents first. */
export async function stopApiserver(apiserver: ApiserverState): Promise<void> {
  const order: Component[] = ['kube-controller-manager', 'kube-apiserver', 'etcd'];
  for (const component of order) {
    const record = apiserver.daemons[component];
    if (record) await stopDaemon(record);
  }
}
