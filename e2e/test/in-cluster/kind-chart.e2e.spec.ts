import { parseCellSet } from '@cellfed/api';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { RoutingTable } from '@cellfed/hashing';

import { eventually, readCellSet } from '../helpers/clients.ts';
import { describeInCluster, e2eEnv } from '../helpers/e2e-env.ts';
import { kubectl as kubectlWith } from '../helpers/router-process.ts';

// The chart as users run it: the router and both controllers as pods in a kind control-plane cluster, kind
// clusters as cells, and the README's guided tour done through that router with kubectl and `kubectl cells`.
// `nx run e2e:e2e-kind` runs this (scripts/e2e-kind.sh builds the images); elsewhere it is skipped.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PLUGIN = join(ROOT, 'packages/kubectl-cells/dist/kubectl-cells.mjs');
const CELLS_CLI = join(ROOT, 'tools/cells/src/cli/cells.ts');
const TOOLS = process.env['CELLFED_TOOLS_BIN'] ?? '';

interface Result {
  code: number;
  stdout: string;
  /** stdout and stderr. */
  out: string;
}

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          stdout,
          out: `${stdout}${stderr}`,
        }),
    );
  });
}

/** The stdout of a command that must succeed; fails with the command and its output otherwise. */
async function succeeded(result: Promise<Result>, what: string): Promise<string> {
  const { code, stdout, out } = await result;
  if (code !== 0) throw new Error(`${what} failed (exit ${code}):\n${out}`);
  return stdout;
}

describeInCluster(
  'the chart in a kind control plane with kind cells: the guided tour through its router',
  (env) => {
    const namespace = `tour-${Date.now()}`;
    const names = Array.from({ length: 30 }, (_, index) => `app-${index + 1}`);
    const bin = mkdtempSync(join(tmpdir(), 'kind-tour-'));
    const path = `${bin}:${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`;
    // Through the in-cluster router, as a user of the federation.
    const kubectl = (...args: string[]) =>
      run(join(TOOLS, 'kubectl'), args, { KUBECONFIG: env.router.kubeconfig, PATH: path });
    const kubectlAt = (kubeconfig: string, ...args: string[]) =>
      run(join(TOOLS, 'kubectl'), ['--kubeconfig', kubeconfig, ...args]);
    const cellsCli = (...args: string[]) => run(process.execPath, [CELLS_CLI, ...args, '--dir', env.dir]);

    /** Where the ring of the CellSet in the control plane puts each of the tour's ConfigMaps. */
    async function placement(): Promise<Map<string, string>> {
      const cellSet = parseCellSet(await readCellSet(env.controlPlane.kubeconfig, env.cellSet));
      const table = RoutingTable.fromCellSet(cellSet.spec);
      return new Map(names.map((name) => [name, table.route(table.keyOf({ namespace, name })).oldCell]));
    }

    /** The tour's ConfigMaps each cell holds, read from the cells themselves. */
    async function holdings(cellIds: readonly string[]): Promise<Map<string, string[]>> {
      const held = new Map<string, string[]>();
      for (const id of cellIds) {
        // env.json as it is now: it names cells added since the suite began too.
        const kubeconfig = e2eEnv().cells.find((cell) => cell.id === id)!.kubeconfig;
        const out = await succeeded(
          kubectlAt(kubeconfig, '-n', namespace, 'get', 'configmaps', '-o', 'name', '--ignore-not-found'),
          `listing ${id}'s ConfigMaps`,
        );
        held.set(
          id,
          out
            .split('\n')
            .map((line) => line.replace('configmap/', ''))
            .filter((name) => names.includes(name)),
        );
      }
      return held;
    }

    beforeAll(() => symlinkSync(PLUGIN, join(bin, 'kubectl-cells')));
    afterAll(async () => {
      rmSync(bin, { recursive: true, force: true });
      await reportRestarts(env.controlPlane.kubeconfig, env.secretNamespace);
    });

    /**
     * Every container of the chart that restarted during the tour, with why and the end of its previous log,
     * on stderr: a failure through the router (a connection dropped) is then read with its cause beside it.
     */
    async function reportRestarts(kubeconfig: string, namespace: string): Promise<void> {
      const listed = await kubectlAt(kubeconfig, '-n', namespace, 'get', 'pods', '-o', 'json');
      if (listed.code !== 0) return void process.stderr.write(`kind tour: pods not listed: ${listed.out}\n`);
      const pods = JSON.parse(listed.stdout) as {
        items: {
          metadata: { name: string };
          status: {
            containerStatuses?: {
              name: string;
              restartCount: number;
              lastState?: { terminated?: { reason?: string; exitCode?: number; finishedAt?: string } };
            }[];
          };
        }[];
      };
      for (const pod of pods.items)
        for (const container of pod.status.containerStatuses ?? []) {
          if (container.restartCount === 0) continue;
          const ended = container.lastState?.terminated;
          const previous = await kubectlAt(
            kubeconfig,
            ...[
              '-n',
              namespace,
              'logs',
              pod.metadata.name,
              '-c',
              container.name,
              '--previous',
              '--tail',
              '20',
            ],
          );
          process.stderr.write(
            `kind tour: ${pod.metadata.name}/${container.name} restarted ${container.restartCount}×, last ` +
              `${ended?.reason ?? '?'} (exit ${ended?.exitCode ?? '?'}) at ${ended?.finishedAt ?? '?'}; its log ended:\n` +
              `${previous.out}\n`,
          );
        }
    }

    it('runs every pod of the chart Ready, and helm test passes', async () => {
      const pods = JSON.parse(
        await succeeded(
          kubectlAt(env.controlPlane.kubeconfig, '-n', env.secretNamespace, 'get', 'pods', '-o', 'json'),
          'listing the chart’s pods',
        ),
      ) as {
        items: { metadata: { name: string }; status: { conditions?: { type: string; status: string }[] } }[];
      };
      const ready = (pod: (typeof pods.items)[number]) =>
        pod.status.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True');
      expect(pods.items.map((pod) => `${pod.metadata.name}: ${ready(pod) ? 'Ready' : 'not Ready'}`)).toEqual(
        pods.items.map((pod) => `${pod.metadata.name}: Ready`),
      );
      for (const component of ['router', 'rebalance-controller', 'backup-controller'])
        expect(pods.items.some((pod) => pod.metadata.name.includes(component))).toBe(true);
      await succeeded(
        run(join(TOOLS, 'helm'), [
          'test',
          'cellfed',
          '--namespace',
          env.secretNamespace,
          '--kubeconfig',
          env.controlPlane.kubeconfig,
          '--timeout',
          '2m',
        ]),
        'helm test cellfed',
      );
    });

    it('runs the control plane’s kube-controller-manager without its quota controller, the cells’ with it', async () => {
      // The chart's quota controller writes the control plane's quotas' status through the router, and the
      // rebalance controller its budgets' and autoscalers' from the cells: the control plane's own
      // controllers of them would write over it (docs/governance.md).
      const controllers = async (kubeconfig: string) =>
        succeeded(
          kubectlAt(
            kubeconfig,
            '-n',
            'kube-system',
            'get',
            'pods',
            '-l',
            'component=kube-controller-manager',
            '-o',
            'jsonpath={.items[0].spec.containers[0].command}',
          ),
          'reading kube-controller-manager’s flags',
        );
      expect(await controllers(env.controlPlane.kubeconfig)).toContain(
        '--controllers=*,bootstrapsigner,tokencleaner,-resourcequota,-disruption,-horizontalpodautoscaling,-persistentvolume-binder',
      );
      expect(await controllers(e2eEnv().cells[0]!.kubeconfig)).not.toContain('-resourcequota');
    });

    it('routes each object to the cell the ring names, and lists them all from every cell', async () => {
      await succeeded(kubectl('create', 'namespace', namespace), 'kubectl create namespace');
      const list = {
        apiVersion: 'v1',
        kind: 'List',
        items: names.map((name, index) => ({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace },
          data: { n: String(index + 1) },
        })),
      };
      const created = await kubectlWith(env.router.kubeconfig, ['create', '-f', '-'], {
        input: JSON.stringify(list),
      });
      expect(created).toMatchObject({ code: 0 });

      const listed = await succeeded(kubectl('-n', namespace, 'get', 'configmaps', '-o', 'name'), 'list');
      expect(listed.split('\n').filter((line) => line.startsWith('configmap/app-'))).toHaveLength(30);
      const placed = await placement();
      const held = await holdings(env.cells.map((cell) => cell.id));
      for (const [cell, objects] of held)
        expect(objects.sort()).toEqual(names.filter((name) => placed.get(name) === cell).sort());
      // More than one cell holds some: the router spread them.
      expect([...held.values()].filter((objects) => objects.length > 0).length).toBeGreaterThan(1);
      const where = await succeeded(kubectl('cells', 'where', 'configmap/app-1', '-n', namespace), 'where');
      expect(where).toContain(placed.get('app-1')!);
    });

    it('counts a quota across the cells with the chart’s quota controller, kube’s own, through the router', async () => {
      const quota = {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: 'tour', namespace },
        spec: { hard: { 'count/configmaps': '1000', secrets: '5' } },
      };
      expect(
        await kubectlWith(env.router.kubeconfig, ['create', '-f', '-'], { input: JSON.stringify(quota) }),
      ).toMatchObject({ code: 0 });
      // The 30 ConfigMaps in their cells and the namespace's one kube-root-ca.crt; no Secret.
      await eventually('the quota’s use counted', async () => {
        const used = await succeeded(
          kubectl('-n', namespace, 'get', 'resourcequota', 'tour', '-o', 'jsonpath={.status.used}'),
          'reading the quota',
        );
        return used === '{"count/configmaps":"31","secrets":"0"}' ? true : undefined;
      });
    });

    it('streams a watch through the router: what is written while it runs', async () => {
      const watch = spawn(
        join(TOOLS, 'kubectl'),
        // Table rows with the event's type: EVENT NAME DATA AGE.
        ['-n', namespace, 'get', 'configmaps', '--watch-only', '--output-watch-events'],
        { env: { ...process.env, KUBECONFIG: env.router.kubeconfig } },
      );
      let out = '';
      watch.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      try {
        // The watch is open once a write made after it starts is seen.
        await eventually(
          'the watch to see a write',
          async () => {
            await kubectl(
              '-n',
              namespace,
              'label',
              'configmap',
              'app-1',
              `seen=${Date.now()}`,
              '--overwrite',
            );
            return /MODIFIED\s+app-1\s/.test(out) ? true : undefined;
          },
          30_000,
        );
        await succeeded(kubectl('-n', namespace, 'create', 'configmap', 'watched'), 'create');
        await succeeded(kubectl('-n', namespace, 'delete', 'configmap', 'watched'), 'delete');
        await eventually(
          'ADDED and DELETED of configmap/watched',
          async () => (/ADDED\s+watched\s/.test(out) && /DELETED\s+watched\s/.test(out) ? true : undefined),
          30_000,
        );
      } finally {
        watch.kill();
      }
    });

    it('execs into a pod in its cell through the router, as kubectl exec does: the upgrade relayed to the kubelet', async () => {
      // A pod any kind node runs without a registry: the pause image its containerd holds, as a cell's Node
      // lists it. Its binary, whatever its path in the image, is the container's first process:
      // `/proc/1/exe -v` runs it again, and `pause -v` prints its version and exits.
      const nodes = JSON.parse(
        await succeeded(
          kubectlAt(env.cells[0]!.kubeconfig, 'get', 'nodes', '-o', 'json'),
          'reading a cell’s nodes',
        ),
      ) as { items: { status: { images?: { names?: string[] }[] } }[] };
      const pause = nodes.items
        .flatMap((node) => node.status.images ?? [])
        .flatMap((image) => image.names ?? [])
        .find((name) => /\/pause:[^@/]+$/.test(name));
      expect(pause).toBeDefined();
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'exec-target', namespace },
        spec: {
          containers: [{ name: 'pause', image: pause, imagePullPolicy: 'Never' }],
          terminationGracePeriodSeconds: 0,
        },
      };
      // The cell makes the namespace's default ServiceAccount a moment after the router made the namespace.
      await eventually(
        'the pod created through the router',
        async () =>
          (await kubectlWith(env.router.kubeconfig, ['apply', '-f', '-'], { input: JSON.stringify(pod) }))
            .code === 0
            ? true
            : undefined,
        60_000,
      );
      try {
        await succeeded(
          kubectl('-n', namespace, 'wait', '--for=condition=Ready', 'pod/exec-target', '--timeout=120s'),
          'the pod Ready',
        );
        const printed = await succeeded(
          kubectl('-n', namespace, 'exec', 'exec-target', '--', '/proc/1/exe', '-v'),
          `kubectl exec through the router into ${pause}`,
        );
        expect(printed).toMatch(/^pause\.c /m);
      } finally {
        await kubectl('-n', namespace, 'delete', 'pod', 'exec-target', '--wait=false');
      }
    });

    it('adds a cell: the rebalance controller pod moves what the ring now places there', async () => {
      const added = (await succeeded(cellsCli('add-cell'), 'cells add-cell')).trim();
      expect(added).toBe(`cell-${env.cells.length + 1}`);
      const plan = await succeeded(kubectl('cells', 'plan', '--add', added), 'kubectl cells plan');
      expect(plan).toMatch(/^\d+ of \d+ objects would move/m);
      await succeeded(kubectl('cells', 'add', added, '--wait'), `kubectl cells add ${added} --wait`);
      const status = await succeeded(kubectl('cells', 'status'), 'kubectl cells status');
      expect(status).toMatch(new RegExp(`^${added}\\s+Normal\\s`, 'm'));

      const placed = await placement();
      const movers = names.filter((name) => placed.get(name) === added);
      expect(movers.length).toBeGreaterThan(0);
      const held = await holdings([added]);
      expect(held.get(added)!.sort()).toEqual(movers.sort());
      const read = await succeeded(
        kubectl('-n', namespace, 'get', 'configmap', ...names, '-o', 'name'),
        'get',
      );
      expect(read.trim().split('\n')).toHaveLength(30);
    }, 300_000);

    it('fails a cell over: its objects are read from their backups, then written once promoted', async () => {
      const placed = await placement();
      const failing = 'cell-2';
      const lost = names.filter((name) => placed.get(name) === failing);
      expect(lost.length).toBeGreaterThan(0);
      await succeeded(cellsCli('kill-cell', '--cell', failing), 'cells kill-cell');
      await succeeded(kubectl('cells', 'down', failing, '--wait'), `kubectl cells down ${failing} --wait`);
      const read = await succeeded(
        kubectl('-n', namespace, 'get', 'configmap', ...names, '-o', 'name'),
        'get',
      );
      expect(read.trim().split('\n')).toHaveLength(30);
      // kubectl retries the 429 a write gets until the backup controller has promoted the backup.
      const labeled = await succeeded(
        kubectl('-n', namespace, 'label', 'configmap', ...lost, 'tour=failed-over'),
        'label the failed cell’s objects',
      );
      expect(labeled.match(/labeled/g)).toHaveLength(lost.length);
      // `where` prints NAME KEY CELL BACKUP STATE: the object is served by another cell now.
      const where = await succeeded(
        kubectl('cells', 'where', `configmap/${lost[0]}`, '-n', namespace),
        'where',
      );
      const row = where.trim().split('\n').at(-1)!.split(/\s+/);
      expect(row[2]).not.toBe(failing);
      const status = await succeeded(kubectl('cells', 'status'), 'kubectl cells status');
      expect(status).toMatch(new RegExp(`^${failing}\\s+Down\\s`, 'm'));
    }, 300_000);
  },
);
