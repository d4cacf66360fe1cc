import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { CELL_COMPONENTS, localCellUser, type CellComponent } from '../chart/cell-identities.ts';
import { controlPlaneRbac, installCellRbac, type ComponentName } from '../chart/component-rbac.ts';
import { writeComponentKubeconfigs } from '../control-plane/component-tokens.ts';
import { CONTROL_PLANE_DISABLED_CONTROLLERS } from '../control-plane/controllers.ts';
import { serviceRangeOf } from '../control-plane/service-ranges.ts';
import {
  applyCellSecret,
  applyObjects,
  bootstrapControlPlane,
  deleteCellSecret,
} from '../control-plane/bootstrap.ts';
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
import { kubeconfigFromFiles } from '../kubeconfig.ts';
import type {
  AddCellOptions,
  CellEntry,
  DownOptions,
  Provider,
  RemoveCellOptions,
  UpOptions,
} from '../provider.ts';
import { resolveTools, type Tools } from '../tools.ts';
import { lostPortRace, startComponent, stopApiserver } from './apiserver-processes.ts';
import {
  apiserverUrl,
  etcdArgs,
  kubeApiserverArgs,
  kubeControllerManagerArgs,
  type ApiserverLayout,
} from './components.ts';
import { isRunning, type DaemonRecord } from './daemon.ts';
import { LocalCells } from './local-cells.ts';
import {
  localStatePath,
  readLocalState,
  writeLocalState,
  type ApiserverState,
  type Component,
  type LocalState,
} from './local-state.ts';
import { createApiserverPki } from './pki.ts';
import { freePorts } from './ports.ts';

export interface LocalProviderOptions {
  /** Directory of the tools scripts/build-tools.sh built; only `up` needs it. */
  toolsDir: string | undefined;
  /** CRD manifests to install in the control plane. */
  crdDir: string;
  /** Where etcd keeps its data; tmpfs (/dev/shm) unless that is not writable. */
  runtimeRoot?: string;
}

/** Attempts per component when another process takes a port between choosing it and binding it. */
const PORT_ATTEMPTS = 3;

/**
 * Real cells as processes on loopback: per apiserver its own etcd, kube-apiserver and (optionally)
 * kube-controller-manager, the way envtest runs them. The processes outlive `up`; `down` stops them.
 */
export class LocalProvider implements Provider {
  readonly name = 'local' as const;
  private readonly options: LocalProviderOptions;

  constructor(options: LocalProviderOptions) {
    this.options = options;
  }

  async up(options: UpOptions): Promise<EnvFile> {
    const dir = resolve(options.dir);
    const log = options.log.child({ provider: 'local', dir });
    const running = runningEnvironment(dir, options.cells);
    if (running) {
      log.info({ cells: running.cells.length }, 'environment already up');
      return running;
    }
    const tools = resolveTools(this.options.toolsDir, ['etcd', 'kube-apiserver', 'kube-controller-manager']);
    await this.down({ dir, log: options.log });

    const startedAt = Date.now();
    mkdirSync(dir, { recursive: true });
    const state: LocalState = {
      version: 1,
      runtimeDir: mkdtempSync(join(this.options.runtimeRoot ?? defaultRuntimeRoot(), 'cellfed-')),
      apiservers: {},
    };
    const save = () => writeLocalState(dir, state);
    save();
    // One failure stops the others before they start more processes, so cleanup sees everything.
    const abort = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, abort.signal]) : abort.signal;
    const ids = [CONTROL_PLANE_ID, ...cellIds(options.cells)];
    log.info(
      { apiservers: ids, controllerManager: options.controllerManager },
      'starting etcd and kube-apiserver per cell',
    );
    // The failure that stopped the others is the one to report: the others then fail with AbortErrors.
    let firstFailure: { error: unknown } | undefined;
    try {
      const results = await Promise.allSettled(
        ids.map((id) =>
          this.startApiserver(tools, dir, id, state, save, { ...options, signal }).catch((error: unknown) => {
            firstFailure ??= { error };
            abort.abort(error);
            throw error;
          }),
        ),
      );
      if (results.some((result) => result.status === 'rejected')) throw firstFailure!.error;

      const env: EnvFile = {
        version: 1,
        provider: 'local',
        dir,
        createdAt: new Date().toISOString(),
        controlPlane: entryOf(dir, state.apiservers[CONTROL_PLANE_ID]!),
        cells: ids.slice(1).map((id) => entryOf(dir, state.apiservers[id]!)),
        cellSet: 'default',
        secretNamespace: 'cellfed-system',
      };
      await bootstrapControlPlane({
        kubeconfigFile: env.controlPlane.kubeconfig,
        cells: env.cells.map((cell) => cellCredentials(dir, cell.id)),
        crdDir: this.options.crdDir,
        log,
        signal,
      });
      // Least privilege everywhere: the components are what the charts make them, in the control plane
      // and in every cell, so a verb the charts forgot fails whatever needs it.
      const { helm } = resolveTools(this.options.toolsDir, ['helm']);
      await applyObjects(env.controlPlane.kubeconfig, controlPlaneRbac(helm));
      for (const cell of env.cells) await installCellRbac(cell.kubeconfig, helm);
      env.components = await writeComponentKubeconfigs({
        adminKubeconfigFile: env.controlPlane.kubeconfig,
        server: env.controlPlane.url,
        caCertFile: join(state.apiservers[CONTROL_PLANE_ID]!.pkiDir, 'ca.crt'),
        file: (component) => componentKubeconfigPath(dir, component),
      });
      log.info(
        { cells: env.cells.map((cell) => cell.id) },
        "the charts' RBAC applied to the control plane and every cell",
      );
      writeEnvFile(env);
      log.info({ seconds: (Date.now() - startedAt) / 1000, env: envFilePath(dir) }, 'environment up');
      return env;
    } catch (error) {
      log.error({ err: error }, 'up failed; stopping everything it started');
      await stopAll(state);
      rmSync(localStatePath(dir), { force: true });
      if (options.signal?.aborted) {
        throw new E2eError(E2eErrorCode.Interrupted, 'interrupted; everything started has been stopped', {
          cause: error,
        });
      }
      throw error;
    }
  }

  /**
   * Starts one more cell in a running environment (the next `cell-N`: etcd, kube-apiserver and, if asked,
   * kube-controller-manager), adds it to env.json and puts its kubeconfig Secret in the control plane. The
   * CellSet is left alone: when the cell joins the ring is the caller's (or the rebalance controller's) call.
   */
  async addCell(options: AddCellOptions): Promise<CellEntry> {
    const dir = resolve(options.dir);
    const env = readEnvFile(dir);
    const state = readLocalState(dir);
    const id = nextCellId(Object.keys(state.apiservers));
    const log = options.log.child({ provider: 'local', dir, cell: id });
    const tools = resolveTools(this.options.toolsDir, ['etcd', 'kube-apiserver', 'kube-controller-manager']);
    const save = () => writeLocalState(dir, state);
    const startedAt = Date.now();
    try {
      await this.startApiserver(tools, dir, id, state, save, {
        log: options.log,
        controllerManager: options.controllerManager,
        apiserverArgs: options.apiserverArgs ?? [],
        signal: options.signal ?? new AbortController().signal,
      });
      const cell = entryOf(dir, state.apiservers[id]!);
      await installCellRbac(cell.kubeconfig, resolveTools(this.options.toolsDir, ['helm']).helm);
      await applyCellSecret(env.controlPlane.kubeconfig, cellCredentials(dir, id));
      writeEnvFile({ ...env, cells: [...env.cells, cell] });
      log.info({ seconds: (Date.now() - startedAt) / 1000 }, 'cell added');
      return cell;
    } catch (error) {
      log.error({ err: error }, 'adding the cell failed; stopping what it started');
      const apiserver = state.apiservers[id];
      if (apiserver) await stopApiserver(apiserver);
      state.apiservers = withoutApiserver(state.apiservers, id);
      save();
      throw error;
    }
  }

  /** kill -9 of the cell's apiserver, etcd and controller manager: a failure as it happens, no goodbye. */
  async killCell(options: RemoveCellOptions): Promise<void> {
    const local = LocalCells.open(resolve(options.dir));
    for (const component of ['kube-apiserver', 'etcd', 'kube-controller-manager'] as const)
      await local.stop(options.id, component, 0);
    options.log.info({ provider: 'local', dir: options.dir, cell: options.id }, 'cell killed');
  }

  /** Stops a cell `up` or `addCell` started, deletes its data and Secret, and drops it from env.json. */
  async removeCell(options: RemoveCellOptions): Promise<void> {
    const dir = resolve(options.dir);
    const env = readEnvFile(dir);
    const state = readLocalState(dir);
    const apiserver = state.apiservers[options.id];
    if (!apiserver || options.id === CONTROL_PLANE_ID) {
      throw new E2eError(E2eErrorCode.InvalidArguments, `no cell "${options.id}" in ${dir}`);
    }
    await deleteCellSecret(env.controlPlane.kubeconfig, options.id);
    await stopApiserver(apiserver);
    rmSync(apiserver.etcdDataDir, { recursive: true, force: true });
    state.apiservers = withoutApiserver(state.apiservers, options.id);
    writeLocalState(dir, state);
    writeEnvFile({ ...env, cells: env.cells.filter((cell) => cell.id !== options.id) });
    options.log.info({ provider: 'local', dir, cell: options.id }, 'cell removed');
  }

  async down(options: DownOptions): Promise<void> {
    const dir = resolve(options.dir);
    const log = options.log.child({ provider: 'local', dir });
    let state: LocalState;
    try {
      state = readLocalState(dir);
    } catch {
      rmSync(envFilePath(dir), { force: true });
      log.info('nothing to stop');
      return;
    }
    const startedAt = Date.now();
    await stopAll(state);
    rmSync(envFilePath(dir), { force: true });
    rmSync(localStatePath(dir), { force: true });
    log.info(
      { seconds: (Date.now() - startedAt) / 1000, apiservers: Object.keys(state.apiservers) },
      'environment down (logs and certificates kept in dir)',
    );
  }

  private async startApiserver(
    tools: Tools,
    dir: string,
    id: string,
    state: LocalState,
    save: () => void,
    options: Pick<UpOptions, 'log' | 'controllerManager'> & {
      signal: AbortSignal;
      apiserverArgs?: readonly string[];
    },
  ): Promise<void> {
    const log = options.log.child({ cell: id });
    const pkiDir = join(dir, 'pki', id);
    const logDir = join(dir, 'logs', id);
    mkdirSync(logDir, { recursive: true });
    const serviceRange = serviceRangeOf(id);
    const pki = createApiserverPki(pkiDir, { name: id, serviceIp: serviceRange.apiserverServiceIp });
    const [port, etcdClientPort, etcdPeerPort] = await freePorts(3);
    const apiserver: ApiserverState = {
      id,
      url: apiserverUrl({ port: port! }),
      port: port!,
      etcdClientPort: etcdClientPort!,
      pkiDir,
      etcdDataDir: join(state.runtimeDir, id),
      daemons: {},
    };
    state.apiservers[id] = apiserver;
    save();
    let peerPort = etcdPeerPort!;
    const layout = (): ApiserverLayout => ({
      id,
      port: apiserver.port,
      etcdClientPort: apiserver.etcdClientPort,
      etcdPeerPort: peerPort,
      etcdDataDir: apiserver.etcdDataDir,
      serviceCidr: serviceRange.cidr,
      pki,
      controllerManagerKubeconfig: join(pkiDir, 'kube-controller-manager.kubeconfig'),
      ...(id === CONTROL_PLANE_ID ? { disabledControllers: CONTROL_PLANE_DISABLED_CONTROLLERS } : {}),
    });
    const start = async (
      component: Component,
      command: string,
      args: () => string[],
      newPorts: () => Promise<void>,
    ) => {
      const began = Date.now();
      for (let attempt = 1; ; attempt++) {
        let record: DaemonRecord | undefined;
        try {
          await startComponent(
            apiserver,
            component,
            { name: `${id}/${component}`, command, args: args(), logFile: join(logDir, `${component}.log`) },
            {
              signal: options.signal,
              onStarted: (started) => {
                record = started;
                apiserver.daemons[component] = started;
                save();
              },
            },
          );
          log.info({ component, seconds: (Date.now() - began) / 1000 }, `${component} ready`);
          return;
        } catch (error) {
          if (attempt >= PORT_ATTEMPTS || !lostPortRace(error, record)) throw error;
          log.warn({ component, attempt }, `${component} lost a port race; retrying on fresh ports`);
          await newPorts();
          save();
        }
      }
    };

    await start(
      'etcd',
      tools.etcd,
      () => etcdArgs(layout()),
      async () => {
        [apiserver.etcdClientPort, peerPort] = (await freePorts(2)) as [number, number];
      },
    );
    await start(
      'kube-apiserver',
      tools['kube-apiserver'],
      () => [...kubeApiserverArgs(layout()), ...(options.apiserverArgs ?? [])],
      async () => {
        apiserver.port = (await freePorts(1))[0]!;
        apiserver.url = apiserverUrl(apiserver);
      },
    );
    writeKubeconfigs(dir, apiserver, layout());
    if (options.controllerManager) {
      await start(
        'kube-controller-manager',
        tools['kube-controller-manager'],
        () => kubeControllerManagerArgs(layout()),
        () => Promise.resolve(),
      );
    }
  }
}

/** The admin kubeconfig users and tests get, cellfed's components' (their Secret), and kube-controller-manager's. */
function writeKubeconfigs(dir: string, apiserver: ApiserverState, layout: ApiserverLayout): void {
  const { pki } = layout;
  mkdirSync(join(dir, 'kubeconfig'), { recursive: true });
  const write = (file: string, user: string, certFile: string, keyFile: string) =>
    writeFileSync(
      file,
      `${JSON.stringify(
        kubeconfigFromFiles({
          name: apiserver.id,
          server: apiserver.url,
          user,
          caCertFile: pki.caCert,
          clientCertFile: certFile,
          clientKeyFile: keyFile,
        }),
        null,
        2,
      )}\n`,
      { mode: 0o600 },
    );
  write(adminKubeconfigPath(dir, apiserver.id), 'admin', pki.adminCert, pki.adminKey);
  for (const component of CELL_COMPONENTS)
    write(
      cellComponentKubeconfigPath(dir, apiserver.id, component),
      localCellUser(component),
      pki.componentCerts[component].cert,
      pki.componentCerts[component].key,
    );
  write(
    layout.controllerManagerKubeconfig,
    'kube-controller-manager',
    pki.controllerManagerCert,
    pki.controllerManagerKey,
  );
}

/** A component's kubeconfig in the control plane: its chart ServiceAccount's name, and nothing more. */
export function componentKubeconfigPath(dir: string, component: ComponentName): string {
  return join(dir, 'kubeconfig', `${CONTROL_PLANE_ID}.cellfed-${component}.kubeconfig`);
}

function adminKubeconfigPath(dir: string, id: string): string {
  return join(dir, 'kubeconfig', `${id}.kubeconfig`);
}

/**
 * What a component's kubeconfig Secret of the cell holds: the identity that component uses there (a test
 * that acts as the rebalance controller uses its one, as the cell's write fence exempts only cellfed's).
 */
export function cellComponentKubeconfigPath(dir: string, id: string, component: CellComponent): string {
  return join(dir, 'kubeconfig', `${id}.${localCellUser(component)}.kubeconfig`);
}

/** A cell's credentials for the control plane's Secrets: each component's kubeconfig of it. */
function cellCredentials(dir: string, id: string) {
  return {
    id,
    kubeconfigs: Object.fromEntries(
      CELL_COMPONENTS.map((component) => [
        component,
        readFileSync(cellComponentKubeconfigPath(dir, id, component), 'utf8'),
      ]),
    ) as Record<CellComponent, string>,
  };
}

function withoutApiserver(apiservers: LocalState['apiservers'], id: string): LocalState['apiservers'] {
  return Object.fromEntries(Object.entries(apiservers).filter(([key]) => key !== id));
}

/** The first `cell-N` not taken. */
function entryOf(dir: string, apiserver: ApiserverState): CellEntry {
  return { id: apiserver.id, url: apiserver.url, kubeconfig: adminKubeconfigPath(dir, apiserver.id) };
}

async function stopAll(state: LocalState): Promise<void> {
  await Promise.all(Object.values(state.apiservers).map((apiserver) => stopApiserver(apiserver)));
  rmSync(state.runtimeDir, { recursive: true, force: true });
}

/** The environment in `dir` when it is complete and every process it recorded still runs. */
function runningEnvironment(dir: string, cells: number): EnvFile | undefined {
  try {
    const env = readEnvFile(dir);
    const state = readLocalState(dir);
    const daemons = Object.values(state.apiservers).flatMap((apiserver) => Object.values(apiserver.daemons));
    // One made before its components had identities of their own (in the control plane, then in each
    // cell) is made again.
    const ownCellIdentities = env.cells.every((cell) =>
      existsSync(cellComponentKubeconfigPath(dir, cell.id, 'router')),
    );
    return env.components &&
      ownCellIdentities &&
      env.cells.length === cells &&
      daemons.every((record) => isRunning(record))
      ? env
      : undefined;
  } catch {
    return undefined;
  }
}

function defaultRuntimeRoot(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}
