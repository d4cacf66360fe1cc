import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import { E2eErrorCode } from '@cellfed/cells/errors.ts';
import { createLogger } from '@cellfed/cells/log.ts';
import { LocalCells } from '@cellfed/cells/local/local-cells.ts';
import { readLocalState } from '@cellfed/cells/local/local-state.ts';
import { LocalProvider } from '@cellfed/cells/local/local-provider.ts';
import { isRunning } from '@cellfed/cells/local/daemon.ts';
import { CHART_CRD_DIR } from '@cellfed/cells/paths.ts';
import { clientsFor, eventually } from '../helpers/clients.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';

const toolsDir = process.env['CELLFED_TOOLS_BIN'];
const log = createLogger({ level: 'warn' });
const scratches: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'cellfed-e2e-'));
  scratches.push(dir);
  return dir;
};
afterAll(() => scratches.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Every process a local environment recorded, and whether any still runs. */
function survivors(dir: string, state = readLocalState(dir)): string[] {
  return Object.values(state.apiservers)
    .flatMap((apiserver) => Object.values(apiserver.daemons))
    .filter((record) => record !== undefined && isRunning(record))
    .map((record) => record!.name);
}

describeE2e('local provider: faults, failures and interruptions', () => {
  if (e2eEnv().provider !== 'local') {
    it.skip(`local provider only; this run uses ${e2eEnv().provider}`, () => undefined);
    return;
  }

  it('a cell whose apiserver is stopped refuses connections, and serves its data again after a restart', async () => {
    const env = e2eEnv();
    const cell = env.cells[0]!;
    const cells = LocalCells.open(env.dir);
    const { core } = clientsFor(cell.kubeconfig);
    const name = `restart-${Date.now().toString(36)}`;
    await core.createNamespace({ body: { metadata: { name } } });

    await cells.stop(cell.id, 'kube-apiserver', 3_000);
    try {
      expect(cells.isRunning(cell.id, 'kube-apiserver')).toBe(false);
      expect(cells.isRunning(cell.id, 'etcd')).toBe(true);
      const refused = await core.readNamespace({ name }).then(
        () => 'answered',
        (error: Error) => String((error.cause as NodeJS.ErrnoException | undefined)?.code),
      );
      expect(refused).toBe('ECONNREFUSED');
    } finally {
      await cells.start(cell.id, 'kube-apiserver'); // the other suites share this cell
    }
    expect(cells.isRunning(cell.id, 'kube-apiserver')).toBe(true);
    expect((await core.readNamespace({ name })).metadata?.name).toBe(name);
  });

  it('a cell whose etcd is restarted keeps its data (tmpfs outlives the process)', async () => {
    const env = e2eEnv();
    const cell = env.cells[1]!;
    const cells = LocalCells.open(env.dir);
    const { core } = clientsFor(cell.kubeconfig);
    const name = `etcd-restart-${Date.now().toString(36)}`;
    await core.createNamespace({ body: { metadata: { name } } });
    await cells.restart(cell.id, 'etcd', 3_000);
    // The apiserver reconnects on its own; reads may fail for a moment while it does.
    const namespace = await eventually('the namespace read back after the etcd restart', () =>
      core.readNamespace({ name }).catch(() => undefined),
    );
    expect(namespace.metadata?.name).toBe(name);
  });

  it('a crashing kube-apiserver fails `up` with the end of its log, and nothing it started survives', async () => {
    const dir = scratch();
    const fakeTools = join(dir, 'tools');
    mkdirSync(fakeTools);
    for (const tool of ['etcd', 'kube-controller-manager'])
      symlinkSync(join(toolsDir!, tool), join(fakeTools, tool));
    writeFileSync(
      join(fakeTools, 'kube-apiserver'),
      '#!/bin/sh\necho "E1123 fake apiserver: failed to start: bad flag" >&2\nexit 1\n',
    );
    chmodSync(join(fakeTools, 'kube-apiserver'), 0o755);
    const provider = new LocalProvider({ toolsDir: fakeTools, crdDir: CHART_CRD_DIR, runtimeRoot: dir });
    const envDir = join(dir, 'env');

    const failure = provider.up({ dir: envDir, cells: 1, controllerManager: true, images: [], log });
    await expect(failure).rejects.toMatchObject({
      code: E2eErrorCode.ProcessExited,
      message: expect.stringContaining('fake apiserver: failed to start: bad flag'),
    });
    // etcd's data lives under `dir` here, so every process this `up` started names `dir` on its command line.
    expect(existsSync(join(envDir, 'local-state.json'))).toBe(false);
    const etcdLog = readFileSync(join(envDir, 'logs', 'control-plane', 'etcd.log'), 'utf8');
    expect(etcdLog.length).toBeGreaterThan(0); // etcd did start before the apiserver failed
    expect(processesUsing(envDir)).toEqual([]);
  });

  it('Ctrl-C during `cells up` stops everything started so far and exits 130', async () => {
    const dir = join(scratch(), 'env');
    const cli = fileURLToPath(new URL('../../../tools/cells/src/cli/cells.ts', import.meta.url));
    const args = ['up', '--dir', dir, '--cells', '1', '--tools', toolsDir!, '--runtime-root', dir];
    const child = spawn(process.execPath, [cli, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // Interrupt once an etcd is ready, while the apiservers are still starting.
    const deadline = Date.now() + 30_000;
    while (!/etcd ready/.test(stderr) && Date.now() < deadline) await sleep(20);
    expect(stderr).toMatch(/etcd ready/);
    expect(processesUsing(dir).length).toBeGreaterThan(0);
    child.kill('SIGINT');

    expect(await exited).toBe(130);
    expect(stderr).toMatch(
      /cells: CELLFED_E2E_INTERRUPTED: interrupted; everything started has been stopped/,
    );
    expect(processesUsing(dir)).toEqual([]);
  });

  it('`cells run` serves kubectl through the router and Ctrl-C stops the router and every cell', async () => {
    const dir = join(scratch(), 'env');
    const cli = fileURLToPath(new URL('../../../tools/cells/src/cli/cells.ts', import.meta.url));
    const args = ['run', '--dir', dir, '--cells', '1', '--no-controller-manager', '--router-port', '0'];
    const child = spawn(process.execPath, [cli, ...args, '--tools', toolsDir!, '--runtime-root', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const kubeconfig = await eventually(
      'the kubeconfig line',
      async () => /export KUBECONFIG=(\S+)/.exec(stdout)?.[1],
      60_000,
    );
    const kubectl = (...kubectlArgs: string[]) =>
      new Promise<number | null>((resolve) =>
        spawn(join(toolsDir!, 'kubectl'), ['--kubeconfig', kubeconfig, ...kubectlArgs], {
          stdio: 'ignore',
        }).on('exit', resolve),
      );
    expect(await kubectl('create', 'namespace', 'demo')).toBe(0);
    expect(await kubectl('-n', 'demo', 'create', 'deployment', 'web', '--image=nginx')).toBe(0);
    // Created in the cell, through the router (the control plane holds no Deployments).
    const cell = clientsFor(join(dir, 'kubeconfig', 'cell-1.kubeconfig'));
    await cell.apps.readNamespacedDeployment({ name: 'web', namespace: 'demo' });
    expect(processesUsing(dir).some((cmdline) => cmdline.includes('cell-router'))).toBe(true);

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(processesUsing(dir)).toEqual([]);
  });

  it('`up` on a running environment changes nothing, and `down` twice is not an error', async () => {
    const dir = join(scratch(), 'env');
    const provider = new LocalProvider({ toolsDir, crdDir: CHART_CRD_DIR });
    const first = await provider.up({ dir, cells: 1, controllerManager: false, images: [], log });
    const pids = JSON.stringify(readLocalState(dir));
    const second = await provider.up({ dir, cells: 1, controllerManager: false, images: [], log });
    expect(second).toEqual(first);
    expect(JSON.stringify(readLocalState(dir))).toBe(pids);

    const state = readLocalState(dir);
    await provider.down({ dir, log });
    expect(survivors(dir, state)).toEqual([]);
    expect(existsSync(join(dir, 'env.json'))).toBe(false);
    await expect(provider.down({ dir, log })).resolves.toBeUndefined();
  });
});

/** Processes whose command line mentions `dir`: what a leak would look like. */
function processesUsing(dir: string): string[] {
  const result: string[] = [];
  for (const entry of readdirProc()) {
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(dir) && isRunning({ pid: Number(entry), startTicks: 0 }))
        result.push(cmdline.trim());
    } catch {
      // the process ended while we looked
    }
  }
  return result;
}

function readdirProc(): string[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name));
}
