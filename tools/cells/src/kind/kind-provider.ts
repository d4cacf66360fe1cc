import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { z } from 'zod';

import { bootstrapControlPlane } from '../control-plane/bootstrap.ts';
import {
  CONTROL_PLANE_ID,
  cellIds,
  envFilePath,
  readJsonFile,
  writeEnvFile,
  writeJsonFile,
  type EnvFile,
} from '../env-file.ts';
import { E2eError, E2eErrorCode } from '../errors.ts';
import type { DownOptions, Provider, UpOptions } from '../provider.ts';
import { runCommand, type CommandRunner } from './command-runner.ts';
import { createApiserverPki } from '../local/pki.ts';
import { resolveTools } from '../tools.ts';
import { DOCKER_INFO, kindClusterConfig, planChartInstall, planKindDown, planKindUp } from './kind-plan.ts';

export interface KindProviderOptions {
  crdDir: string;
  /** The chart installed into the control-plane cluster when images are given (`up --image …`). */
  chartDir?: string;
  /** Where helm and kubectl are (scripts/build-tools.sh); needed to install the chart. */
  toolsDir?: string;
  nodeImage?: string;
  run?: CommandRunner;
  /** Bootstraps the control plane; injected so unit tests need no cluster. */
  bootstrap?: typeof bootstrapControlPlane;
}

const KindStateSchema = z.object({ clusters: z.array(z.string()) });
const kindStatePath = (dir: string) => join(dir, 'kind-state.json');

/**
 * One kind cluster per cell plus one for the router control plane. Needs a Docker engine (this project's CI
 * machines have none: there the suite uses `local`); README's "kind provider" section says how to run it.
 */
export class KindProvider implements Provider {
  readonly name = 'kind' as const;
  private readonly options: KindProviderOptions;
  private readonly run: CommandRunner;

  constructor(options: KindProviderOptions) {
    this.options = options;
    this.run = options.run ?? runCommand;
  }

  /** Why kind cannot run here, or undefined when a Docker engine answers. */
  async unavailableReason(): Promise<string | undefined> {
    try {
      await this.run(DOCKER_INFO);
      return undefined;
    } catch (error) {
      return `kind needs a Docker engine and \`docker info\` failed: ${(error as Error).message}`;
    }
  }

  async up(options: UpOptions): Promise<EnvFile> {
    const dir = resolve(options.dir);
    const log = options.log.child({ provider: 'kind', dir });
    const reason = await this.unavailableReason();
    if (reason) throw new E2eError(E2eErrorCode.ProviderUnavailable, reason);
    await this.down({ dir, log: options.log });

    const startedAt = Date.now();
    const plans = planKindUp({
      dir,
      ids: [CONTROL_PLANE_ID, ...cellIds(options.cells)],
      controlPlaneId: CONTROL_PLANE_ID,
      images: options.images,
      ...(this.options.nodeImage ? { nodeImage: this.options.nodeImage } : {}),
    });
    const created: string[] = [];
    try {
      mkdirSync(join(dir, 'kind'), { recursive: true });
      mkdirSync(join(dir, 'kubeconfig'), { recursive: true });
      for (const plan of plans) {
        writeFileSync(
          plan.configFile,
          `${JSON.stringify(kindClusterConfig(plan.id, this.options.nodeImage), null, 2)}\n`,
        );
        const began = Date.now();
        for (const command of plan.create) {
          if (command.args[0] === 'create') {
            // Recorded before it runs: an interrupted or failed create can leave a half-made cluster.
            created.push(plan.clusterName);
            writeJsonFile(kindStatePath(dir), { clusters: created });
          }
          const { stdout } = await this.run(command, options.signal);
          if (command.stdoutFile) writeFileSync(command.stdoutFile, stdout, { mode: 0o600 });
        }
        log.info(
          { cell: plan.id, cluster: plan.clusterName, seconds: (Date.now() - began) / 1000 },
          'kind cluster ready',
        );
      }
      const entry = (plan: (typeof plans)[number]) => ({
        id: plan.id,
        url: serverOf(readFileSync(plan.kubeconfig, 'utf8')),
        kubeconfig: plan.kubeconfig,
      });
      const env: EnvFile = {
        version: 1,
        provider: 'kind',
        dir,
        createdAt: new Date().toISOString(),
        controlPlane: entry(plans[0]!),
        cells: plans.slice(1).map(entry),
        cellSet: 'default',
        secretNamespace: 'cellfed-system',
      };
      await (this.options.bootstrap ?? bootstrapControlPlane)({
        kubeconfigFile: env.controlPlane.kubeconfig,
        // The controllers run inside the control-plane cluster and reach the cells over the kind network.
        cells: plans
          .slice(1)
          .map((plan) => ({ id: plan.id, kubeconfig: readFileSync(plan.internalKubeconfig, 'utf8') })),
        crdDir: this.options.crdDir,
        log,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (options.images.length > 0 && this.options.chartDir) {
        await this.installChart(dir, env, options.images, options.signal);
        log.info({ images: options.images }, 'chart installed in the control-plane cluster');
      }
      writeEnvFile(env);
      log.info({ seconds: (Date.now() - startedAt) / 1000, env: envFilePath(dir) }, 'environment up');
      return env;
    } catch (error) {
      log.error({ err: error }, 'up failed; deleting the clusters it created');
      await this.down({ dir, log: options.log });
      throw error;
    }
  }

  /** The chart, with the images kind loaded, and a serving certificate for the router of its own CA. */
  private async installChart(dir: string, env: EnvFile, images: readonly string[], signal?: AbortSignal) {
    const tools = resolveTools(this.options.toolsDir, ['helm', 'kubectl']);
    const routerPki = createApiserverPki(join(dir, 'pki', 'router'), {
      name: 'cellfed-router',
      serviceIp: '10.96.0.1',
      extraSans: [
        'DNS:cellfed-router',
        'DNS:cellfed-router.cellfed-system',
        'DNS:cellfed-router.cellfed-system.svc',
      ],
    });
    for (const command of planChartInstall({
      kubeconfig: env.controlPlane.kubeconfig,
      chartDir: this.options.chartDir!,
      helm: tools.helm,
      kubectl: tools.kubectl,
      namespace: env.secretNamespace,
      images,
      routerCert: routerPki.servingCert,
      routerKey: routerPki.servingKey,
    }))
      await this.run(command, signal);
  }

  async down(options: DownOptions): Promise<void> {
    const dir = resolve(options.dir);
    let clusters: string[];
    try {
      clusters = readJsonFile(kindStatePath(dir), KindStateSchema, 'kind provider state').clusters;
    } catch {
      clusters = [];
    }
    for (const command of planKindDown(clusters)) await this.run(command);
    rmSync(kindStatePath(dir), { force: true });
    rmSync(envFilePath(dir), { force: true });
    options.log.info(
      { provider: 'kind', dir, clusters },
      clusters.length ? 'kind clusters deleted' : 'nothing to stop',
    );
  }
}

/** The server URL of a kind kubeconfig (YAML with a `server: https://…` line). */
export function serverOf(kubeconfig: string): string {
  const match = /^\s*server:\s*(\S+)\s*$/m.exec(kubeconfig);
  if (!match) throw new E2eError(E2eErrorCode.InvalidEnvironment, 'kubeconfig without a server URL');
  return match[1]!;
}
