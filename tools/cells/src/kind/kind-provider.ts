import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { applyCellSecret, bootstrapControlPlane, deleteCellSecret } from '../control-plane/bootstrap.ts';
import { CONTROL_PLANE_DISABLED_CONTROLLERS } from '../control-plane/controllers.ts';
import { serviceRangeOf } from '../control-plane/service-ranges.ts';
import {
  CONTROL_PLANE_ID,
  cellIds,
  envFilePath,
  nextCellId,
  readEnvFile,
  writeEnvFile,
  type EnvFile,
} from '../env-file.ts';
import { E2eError, E2eErrorCode } from '../errors.ts';
import type { Logger } from '../log.ts';
import type {
  AddCellOptions,
  CellEntry,
  DownOptions,
  Provider,
  RemoveCellOptions,
  UpOptions,
} from '../provider.ts';
import { onPath, runCommand, type CommandRunner } from './command-runner.ts';
import { createApiserverPki } from '../local/pki.ts';
import { freePorts } from '../local/ports.ts';
import { resolveTools } from '../tools.ts';
import type { CellComponent } from '../chart/cell-identities.ts';
import { leastPrivilegeCellKubeconfigs } from './cell-identity.ts';
import {
  DOCKER_INFO,
  kindClusterConfig,
  kindClusterName,
  planChartInstall,
  planKindDown,
  planKindKill,
  planKindUp,
  type KindClusterPlan,
} from './kind-plan.ts';
import { readKindState, removeKindState, withKindOf, writeKindState, type KindState } from './kind-state.ts';
import { writeRouterAccess } from './router-access.ts';

export interface KindProviderOptions {
  crdDir: string;
  /** The chart installed into the control-plane cluster when images are given (`up --image …`). */
  chartDir?: string;
  /** Where helm and kubectl are (scripts/build-tools.sh); needed to install the chart. */
  toolsDir?: string;
  nodeImage?: string;
  /** The kind binary (default: `kind` on PATH, resolved at `up` and kept for the later commands). */
  kindBinary?: string;
  run?: CommandRunner;
  /** Bootstraps the control plane; injected so unit tests need no cluster. */
  bootstrap?: typeof bootstrapControlPlane;
  /** Writes and deletes a cell's kubeconfig Secret in the control plane; injected as `bootstrap` is. */
  cellSecrets?: { apply: typeof applyCellSecret; delete: typeof deleteCellSecret };
  /**
   * What a cell's Secret holds: its internal kubeconfig with an identity bound only by the cellfed-cell
   * chart (cell-identity.ts); injected as `bootstrap` is.
   */
  cellIdentity?: (plan: KindClusterPlan) => Promise<Record<CellComponent, string>>;
}

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
    const withChart = options.images.length > 0 && this.options.chartDir !== undefined;
    const routerHostPort = withChart ? (await freePorts(1))[0] : undefined;
    const plans = planKindUp({
      dir,
      ids: [CONTROL_PLANE_ID, ...cellIds(options.cells)],
      controlPlaneId: CONTROL_PLANE_ID,
      images: options.images,
    });
    const kind = this.options.kindBinary ?? onPath('kind');
    const state: KindState = {
      clusters: [],
      ...(this.options.nodeImage ? { nodeImage: this.options.nodeImage } : {}),
      ...(kind ? { kind } : {}),
    };
    try {
      for (const plan of plans)
        await this.createCluster(dir, plan, state, log, {
          routerHostPort: plan.id === CONTROL_PLANE_ID ? routerHostPort : undefined,
          signal: options.signal,
        });
      const env: EnvFile = {
        version: 1,
        provider: 'kind',
        dir,
        createdAt: new Date().toISOString(),
        controlPlane: entryOf(plans[0]!),
        cells: plans.slice(1).map(entryOf),
        cellSet: 'default',
        secretNamespace: 'cellfed-system',
      };
      await (this.options.bootstrap ?? bootstrapControlPlane)({
        kubeconfigFile: env.controlPlane.kubeconfig,
        // The controllers run inside the control-plane cluster and reach the cells over the kind network,
        // each cell's as the identity the cellfed-cell chart binds, never kind's admin.
        cells: await Promise.all(
          plans.slice(1).map(async (plan) => ({ id: plan.id, kubeconfigs: await this.cellIdentity(plan) })),
        ),
        crdDir: this.options.crdDir,
        log,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (withChart && routerHostPort) {
        const routerCa = await this.installChart(dir, env, options.images, options.signal);
        env.router = writeRouterAccess(dir, env.controlPlane.kubeconfig, routerCa, routerHostPort);
        log.info(
          { images: options.images, router: env.router.url },
          'chart installed in the control-plane cluster',
        );
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

  /** One more cell: a kind cluster, its Secret in the control plane (the internal kubeconfig), env.json. */
  async addCell(options: AddCellOptions): Promise<CellEntry> {
    const dir = resolve(options.dir);
    const env = readEnvFile(dir);
    const id = nextCellId(env.cells.map((cell) => cell.id));
    // Without the cell: createCluster's lines name it.
    const log = options.log.child({ provider: 'kind', dir });
    const [plan] = planKindUp({ dir, ids: [id], controlPlaneId: CONTROL_PLANE_ID, images: [] });
    const state = readKindState(dir);
    if (this.options.nodeImage) state.nodeImage = this.options.nodeImage;
    try {
      await this.createCluster(dir, plan!, state, log, { signal: options.signal });
      await (this.options.cellSecrets?.apply ?? applyCellSecret)(env.controlPlane.kubeconfig, {
        id,
        kubeconfigs: await this.cellIdentity(plan!),
      });
    } catch (error) {
      log.error({ err: error, cell: id }, 'adding the cell failed; deleting its cluster');
      for (const command of planKindDown([plan!.clusterName]))
        await this.run(withKindOf(state, command)).catch(() => undefined);
      writeKindState(dir, {
        ...state,
        clusters: state.clusters.filter((cluster) => cluster !== plan!.clusterName),
      });
      throw error;
    }
    const cell = entryOf(plan!);
    writeEnvFile({ ...env, cells: [...env.cells, cell] });
    log.info({ cell: id }, 'cell added');
    return cell;
  }

  /** Deletes a cell's cluster and Secret, and drops it from env.json. */
  async removeCell(options: RemoveCellOptions): Promise<void> {
    const dir = resolve(options.dir);
    const env = envWithCell(dir, options.id);
    await (this.options.cellSecrets?.delete ?? deleteCellSecret)(env.controlPlane.kubeconfig, options.id);
    const name = kindClusterName(options.id);
    const state = readKindState(dir);
    for (const command of planKindDown([name])) await this.run(withKindOf(state, command));
    writeKindState(dir, {
      ...state,
      clusters: state.clusters.filter((cluster) => cluster !== name),
    });
    writeEnvFile({ ...env, cells: env.cells.filter((cell) => cell.id !== options.id) });
    options.log.info({ provider: 'kind', dir, cell: options.id }, 'cell removed');
  }

  /** A failure as it happens: the cell's node container killed, its apiserver gone at once. */
  async killCell(options: RemoveCellOptions): Promise<void> {
    const dir = resolve(options.dir);
    envWithCell(dir, options.id);
    await this.run(planKindKill(options.id));
    options.log.info({ provider: 'kind', dir, cell: options.id }, 'cell killed');
  }

  /** A cell's kubeconfig for its Secret (see KindProviderOptions.cellIdentity). */
  private cellIdentity(plan: KindClusterPlan): Promise<Record<CellComponent, string>> {
    if (this.options.cellIdentity) return this.options.cellIdentity(plan);
    return leastPrivilegeCellKubeconfigs(plan, resolveTools(this.options.toolsDir, ['helm']).helm);
  }

  /**
   * Writes a cluster's kind config and runs its plan with the state's node image and kind; the cluster is
   * recorded in the state before kind creates anything.
   */
  private async createCluster(
    dir: string,
    plan: KindClusterPlan,
    state: KindState,
    log: Logger,
    options: { routerHostPort?: number | undefined; signal?: AbortSignal | undefined },
  ): Promise<void> {
    mkdirSync(join(dir, 'kind'), { recursive: true });
    mkdirSync(join(dir, 'kubeconfig'), { recursive: true });
    const config = kindClusterConfig(plan.id, {
      nodeImage: state.nodeImage,
      routerHostPort: options.routerHostPort,
      disabledControllers: plan.id === CONTROL_PLANE_ID ? CONTROL_PLANE_DISABLED_CONTROLLERS : undefined,
    });
    writeFileSync(plan.configFile, `${JSON.stringify(config, null, 2)}\n`);
    const began = Date.now();
    for (const command of plan.create) {
      if (command.args[0] === 'create') {
        // Recorded before it runs: an interrupted or failed create can leave a half-made cluster.
        state.clusters.push(plan.clusterName);
        writeKindState(dir, state);
      }
      const { stdout } = await this.run(withKindOf(state, command), options.signal);
      if (command.stdoutFile) writeFileSync(command.stdoutFile, stdout, { mode: 0o600 });
    }
    log.info(
      { cell: plan.id, cluster: plan.clusterName, seconds: (Date.now() - began) / 1000 },
      'kind cluster ready',
    );
  }

  /**
   * The chart, with the images kind loaded, and a serving certificate for the router of its own CA; answers
   * that CA's certificate file.
   */
  private async installChart(
    dir: string,
    env: EnvFile,
    images: readonly string[],
    signal?: AbortSignal,
  ): Promise<string> {
    const tools = resolveTools(this.options.toolsDir, ['helm', 'kubectl']);
    const routerPki = createApiserverPki(join(dir, 'pki', 'router'), {
      name: 'cellfed-router',
      serviceIp: serviceRangeOf(CONTROL_PLANE_ID).apiserverServiceIp,
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
      routerCa: routerPki.caCert,
    }))
      await this.run(command, signal);
    return routerPki.caCert;
  }

  async down(options: DownOptions): Promise<void> {
    const dir = resolve(options.dir);
    const state = readKindState(dir);
    const { clusters } = state;
    for (const command of planKindDown(clusters)) await this.run(withKindOf(state, command));
    removeKindState(dir);
    rmSync(envFilePath(dir), { force: true });
    options.log.info(
      { provider: 'kind', dir, clusters },
      clusters.length ? 'kind clusters deleted' : 'nothing to stop',
    );
  }
}

/** env.json of `dir`, which must list cell `id`. */
function envWithCell(dir: string, id: string): EnvFile {
  const env = readEnvFile(dir);
  if (!env.cells.some((cell) => cell.id === id))
    throw new E2eError(E2eErrorCode.InvalidArguments, `no cell "${id}" in ${dir}`);
  return env;
}

function entryOf(plan: KindClusterPlan): CellEntry {
  return { id: plan.id, url: serverOf(readFileSync(plan.kubeconfig, 'utf8')), kubeconfig: plan.kubeconfig };
}

/** The server URL of a kind kubeconfig (YAML with a `server: https://…` line). */
export function serverOf(kubeconfig: string): string {
  const match = /^\s*server:\s*(\S+)\s*$/m.exec(kubeconfig);
  if (!match) throw new E2eError(E2eErrorCode.InvalidEnvironment, 'kubeconfig without a server URL');
  return match[1]!;
}
