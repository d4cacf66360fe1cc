import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { componentKubeconfig, type EnvFile } from '../env-file.ts';
import { E2eError, E2eErrorCode } from '../errors.ts';
import { freePorts } from '../local/ports.ts';
import { waitUntilReady } from '../local/readiness.ts';
import { resolveTools } from '../tools.ts';
import { isRunning, stopApp } from './node-app.ts';

export interface QuotaControllerProcess {
  child: ChildProcess;
  /** Where its klog lines go. */
  logFile: string;
}

export interface StartQuotaControllerOptions {
  /** The built tools (scripts/build-tools.sh): its kube-controller-manager. */
  toolsDir: string | undefined;
  /** Its log file (default DIR/logs/quota-controller.log). */
  logFile?: string;
  /** How often it counts every quota in full (`--resource-quota-sync-period`, default 2s: tests wait on it). */
  syncPeriod?: string;
  timeoutMs?: number;
}

/**
 * The quota controller as the chart runs it (charts/cellfed quotaController): kube-controller-manager with
 * its ResourceQuota controller alone, calling the router at `routerUrl` as the chart's quota-controller
 * ServiceAccount, so that it counts the federation as one apiserver's quota controller counts its objects.
 * Resolves once its /healthz answers.
 */
export async function startQuotaController(
  env: EnvFile,
  routerUrl: string,
  options: StartQuotaControllerOptions,
): Promise<QuotaControllerProcess> {
  const binary = resolveTools(options.toolsDir, ['kube-controller-manager'])['kube-controller-manager'];
  // Its own least-privilege kubeconfig for the control plane, pointed at the router: a local router serves
  // with the control plane's certificate, so the CA stays.
  const kubeconfig = JSON.parse(readFileSync(componentKubeconfig(env, 'quota-controller'), 'utf8')) as {
    clusters: { cluster: { server: string } }[];
  };
  for (const cluster of kubeconfig.clusters) cluster.cluster.server = routerUrl;
  const kubeconfigFile = join(env.dir, 'kubeconfig', 'quota-controller-router.kubeconfig');
  writeFileSync(kubeconfigFile, JSON.stringify(kubeconfig, null, 2), { mode: 0o600 });
  const logFile = options.logFile ?? join(env.dir, 'logs', 'quota-controller.log');
  mkdirSync(join(logFile, '..'), { recursive: true });
  const [port] = await freePorts(1);
  const child = spawn(
    binary,
    [
      '--controllers=resourcequota',
      `--kubeconfig=${kubeconfigFile}`,
      // What the cells admit is charged to their copies, not to this quota: it shows at the next full count.
      `--resource-quota-sync-period=${options.syncPeriod ?? '2s'}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      // Its /healthz, on a self-signed certificate it keeps in memory.
      `--secure-port=${port}`,
      '--authentication-skip-lookup=true',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  child.once('exit', () => log.end());
  try {
    await waitUntilReady(
      { name: 'the quota controller', url: `https://127.0.0.1:${port}/healthz`, tls: 'selfSigned' },
      {
        timeoutMs: options.timeoutMs ?? 60_000,
        stillRunning: () => {
          if (!isRunning(child))
            throw new E2eError(
              E2eErrorCode.ProcessExited,
              `the quota controller (kube-controller-manager) exited with ${child.exitCode ?? child.signalCode}; see ${logFile}`,
            );
        },
      },
    );
    return { child, logFile };
  } catch (error) {
    await stopQuotaController({ child });
    throw error;
  }
}

/** SIGTERM, and wait for it to exit. */
export const stopQuotaController = (process: { child: ChildProcess } | undefined): Promise<void> =>
  stopApp(process);
