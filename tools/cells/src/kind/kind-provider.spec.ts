import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { jest } from '@jest/globals';

import { E2eError, E2eErrorCode } from '../errors.ts';
import { createLogger } from '../log.ts';
import type { CommandRunner } from './command-runner.ts';
import type { Command, KindClusterPlan } from './kind-plan.ts';
import { KindProvider } from './kind-provider.ts';

const log = createLogger({ level: 'silent' });

/** Records commands; `kind create` writes the kubeconfig kind would write. */
function fakeKind(options: { dockerFails?: boolean; failOn?: string } = {}) {
  const commands: string[] = [];
  const run: CommandRunner = async (command: Command) => {
    const line = [command.command, ...command.args].join(' ');
    commands.push(line);
    if (options.dockerFails && command.command === 'docker') {
      throw new E2eError(
        E2eErrorCode.CommandFailed,
        'Cannot connect to the Docker daemon at unix:///var/run/docker.sock',
      );
    }
    if (options.failOn && line.includes(options.failOn))
      throw new E2eError(E2eErrorCode.CommandFailed, `${line} failed`);
    if (command.args[0] === 'create') {
      const kubeconfig = command.args[command.args.indexOf('--kubeconfig') + 1]!;
      writeFileSync(
        kubeconfig,
        'clusters:\n- cluster:\n    certificate-authority-data: S0lORA==\n    server: https://127.0.0.1:40001\n',
      );
    }
    return { stdout: command.args[0] === 'get' ? 'server: https://cellfed-x-control-plane:6443\n' : '' };
  };
  return { commands, run };
}

const scratches: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'kind-'));
  scratches.push(dir);
  return dir;
};
afterAll(() => scratches.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A cell's internal kubeconfig as it is: the identity set-up needs real clusters (cell-identity.ts). */
const cellIdentity = async (plan: KindClusterPlan) => {
  const kubeconfig = readFileSync(plan.internalKubeconfig, 'utf8');
  return { router: kubeconfig, 'rebalance-controller': kubeconfig, 'backup-controller': kubeconfig };
};

describe('KindProvider', () => {
  it('says why it cannot run without a Docker engine, and starts nothing', async () => {
    const kind = fakeKind({ dockerFails: true });
    const provider = new KindProvider({
      cellIdentity,
      crdDir: '/crds',
      kindBinary: 'kind',
      run: kind.run,
    });
    expect(await provider.unavailableReason()).toMatch(
      /kind needs a Docker engine and `docker info` failed: Cannot connect/,
    );
    await expect(
      provider.up({
        dir: scratch(),
        cells: 2,
        controllerManager: true,
        images: [],
        log,
      }),
    ).rejects.toMatchObject({ code: E2eErrorCode.ProviderUnavailable });
    expect(kind.commands.filter((line) => line.startsWith('kind'))).toEqual([]);
  });

  it('creates the clusters, bootstraps the control plane with the internal kubeconfigs, and writes env.json', async () => {
    const dir = scratch();
    const kind = fakeKind();
    const bootstrap = jest.fn(async () => undefined);
    const provider = new KindProvider({
      cellIdentity,
      crdDir: '/crds',
      kindBinary: 'kind',
      run: kind.run,
      bootstrap,
    });
    const env = await provider.up({
      dir,
      cells: 2,
      controllerManager: true,
      images: ['cellfed/router:dev'],
      log,
    });

    expect(kind.commands.filter((line) => line.startsWith('kind create'))).toHaveLength(3);
    expect(kind.commands).toContain('kind load docker-image cellfed/router:dev --name cellfed-control-plane');
    expect(env.cells.map((cell) => [cell.id, cell.url])).toEqual([
      ['cell-1', 'https://127.0.0.1:40001'],
      ['cell-2', 'https://127.0.0.1:40001'],
    ]);
    const [options] = bootstrap.mock.calls[0] as unknown as [
      { cells: { id: string; kubeconfigs: Record<string, string> }[] },
    ];
    expect(options.cells.map((cell) => cell.kubeconfigs['router'])).toEqual([
      'server: https://cellfed-x-control-plane:6443\n',
      'server: https://cellfed-x-control-plane:6443\n',
    ]);
    expect(JSON.parse(readFileSync(join(dir, 'env.json'), 'utf8')).provider).toBe('kind');

    await provider.down({ dir, log });
    expect(kind.commands.filter((line) => line.startsWith('kind delete'))).toEqual([
      'kind delete cluster --name cellfed-control-plane',
      'kind delete cluster --name cellfed-cell-1',
      'kind delete cluster --name cellfed-cell-2',
    ]);
  });

  it('deletes the clusters it created when a later step fails', async () => {
    const dir = scratch();
    const kind = fakeKind({ failOn: 'create cluster --name cellfed-cell-2' });
    const provider = new KindProvider({
      cellIdentity,
      crdDir: '/crds',
      kindBinary: 'kind',
      run: kind.run,
      bootstrap: async () => undefined,
    });
    await expect(provider.up({ dir, cells: 2, controllerManager: true, images: [], log })).rejects.toThrow(
      /cellfed-cell-2/,
    );
    expect(kind.commands.filter((line) => line.startsWith('kind delete'))).toEqual([
      'kind delete cluster --name cellfed-control-plane',
      'kind delete cluster --name cellfed-cell-1',
      'kind delete cluster --name cellfed-cell-2',
    ]);
  });

  it('installs the chart into the control-plane cluster with the images it loaded', async () => {
    const dir = scratch();
    const tools = scratch();
    for (const tool of ['helm', 'kubectl']) writeFileSync(join(tools, tool), '', { mode: 0o755 });
    const kind = fakeKind();
    const provider = new KindProvider({
      cellIdentity,
      crdDir: '/crds',
      kindBinary: 'kind',
      chartDir: '/repo/charts/cellfed',
      toolsDir: tools,
      run: kind.run,
      bootstrap: async () => undefined,
    });
    await provider.up({ dir, cells: 1, controllerManager: true, images: ['cellfed/cell-router:dev'], log });

    const helm = kind.commands.find((line) => line.startsWith(join(tools, 'helm')));
    expect(helm).toContain('upgrade --install cellfed /repo/charts/cellfed');
    expect(helm).toContain('--set router.image.repository=cellfed/cell-router --set router.image.tag=dev');
    const secret = kind.commands.find((line) => line.startsWith(join(tools, 'kubectl')));
    expect(secret).toContain(
      `create secret generic cellfed-router-tls --type=kubernetes.io/tls --from-file=tls.crt=${join(dir, 'pki', 'router', 'apiserver.crt')}`,
    );
    // The Secret before the chart that mounts it.
    expect(kind.commands.indexOf(secret!)).toBeLessThan(kind.commands.indexOf(helm!));

    // The router is published on a loopback port, and env.json gives a kubeconfig for it.
    const config = JSON.parse(readFileSync(join(dir, 'kind', 'control-plane.json'), 'utf8'));
    const published = config.nodes[0].extraPortMappings[0];
    expect(published).toMatchObject({ containerPort: 30443, listenAddress: '127.0.0.1' });
    expect(published.hostPort).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(join(dir, 'kind', 'cell-1.json'), 'utf8')).nodes[0]).not.toHaveProperty(
      'extraPortMappings',
    );
    const env = JSON.parse(readFileSync(join(dir, 'env.json'), 'utf8'));
    expect(env.router).toEqual({
      id: 'router',
      url: `https://127.0.0.1:${published.hostPort}`,
      kubeconfig: join(dir, 'kubeconfig', 'router.kubeconfig'),
    });
    const routerKubeconfig = readFileSync(env.router.kubeconfig, 'utf8');
    expect(routerKubeconfig).toContain(`server: https://127.0.0.1:${published.hostPort}`);
    const ca = readFileSync(join(dir, 'pki', 'router', 'ca.crt'));
    expect(routerKubeconfig).toContain(`certificate-authority-data: ${ca.toString('base64')}`);
  });

  it('adds a cell as a cluster with its Secret, kills its node, and removes it', async () => {
    const dir = scratch();
    const kind = fakeKind();
    const secrets: string[] = [];
    const provider = new KindProvider({
      cellIdentity,
      crdDir: '/crds',
      nodeImage: 'cellfed-local/kind-node:v1.37.2',
      kindBinary: '/opt/kind/bin/kind',
      run: kind.run,
      bootstrap: async () => undefined,
      cellSecrets: {
        apply: async (_kubeconfig, cell) => void secrets.push(`apply ${cell.id}`),
        delete: async (_kubeconfig, id) => void secrets.push(`delete ${id}`),
      },
    });
    await provider.up({ dir, cells: 1, controllerManager: true, images: [], log });
    kind.commands.length = 0;

    // A later command (`cells add-cell`) is another process, given no node image: up's is kept for it.
    const later = new KindProvider({
      cellIdentity,
      crdDir: '/crds',
      run: kind.run,
      cellSecrets: {
        apply: async (_kubeconfig, cell) => void secrets.push(`apply ${cell.id}`),
        delete: async (_kubeconfig, id) => void secrets.push(`delete ${id}`),
      },
    });
    const cell = await later.addCell({ dir, controllerManager: true, log });
    expect(cell.id).toBe('cell-2');
    expect(JSON.parse(readFileSync(join(dir, 'kind', 'cell-2.json'), 'utf8')).nodes[0].image).toBe(
      'cellfed-local/kind-node:v1.37.2',
    );
    expect(kind.commands[0]).toContain('kind create cluster --name cellfed-cell-2');
    expect(secrets).toEqual(['apply cell-2']);
    const env = JSON.parse(readFileSync(join(dir, 'env.json'), 'utf8'));
    expect(env.cells.map((entry: { id: string }) => entry.id)).toEqual(['cell-1', 'cell-2']);

    await provider.killCell({ dir, id: 'cell-2', log });
    expect(kind.commands.at(-1)).toBe('docker kill cellfed-cell-2-control-plane');
    await expect(provider.killCell({ dir, id: 'cell-9', log })).rejects.toThrow('no cell "cell-9"');

    await provider.removeCell({ dir, id: 'cell-2', log });
    expect(kind.commands.at(-1)).toBe('/opt/kind/bin/kind delete cluster --name cellfed-cell-2');
    expect(secrets).toEqual(['apply cell-2', 'delete cell-2']);
    expect(JSON.parse(readFileSync(join(dir, 'env.json'), 'utf8')).cells).toHaveLength(1);
    // down deletes what is left, and only that.
    kind.commands.length = 0;
    await provider.down({ dir, log });
    expect(kind.commands).toEqual([
      '/opt/kind/bin/kind delete cluster --name cellfed-control-plane',
      '/opt/kind/bin/kind delete cluster --name cellfed-cell-1',
    ]);
  });
});
