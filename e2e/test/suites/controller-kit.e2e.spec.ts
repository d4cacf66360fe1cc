import { CELLSET_EXAMPLES, CELL_BACKUP_EXAMPLES, CellBackupSchema, safeParseCellSet } from '@cellfed/api';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import {
  CellPool,
  Informer,
  KubeClient,
  resourceListWatch,
  type CellHealth,
  type EngagedCell,
  type InformerEvent,
} from '@cellfed/controller-kit';
import { memoryLogger, metricValue } from '@cellfed/controller-kit/testing';
import { Registry } from 'prom-client';

import { credentialsNamespace } from '@cellfed/cells/chart/cell-identities.ts';
import { cellSecretName } from '@cellfed/cells/control-plane/cell-secrets.ts';
import { LocalCells } from '@cellfed/cells/local/local-cells.ts';
import { readLocalState } from '@cellfed/cells/local/local-state.ts';
import { eventually } from '../helpers/clients.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
const CONTENDER = fileURLToPath(
  new URL('../../../packages/controller-kit/test/fixtures/lease-contender.ts', import.meta.url),
);

/** Writes straight to etcd's JSON gateway: moves the revision on while the apiserver is down. */
async function etcd(url: string, path: string, body: unknown): Promise<{ header: { revision: string } }> {
  const response = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { header: { revision: string } };
}

describeE2e('controller-kit against real apiservers', () => {
  const env = e2eEnv();
  const controlPlane = () => KubeClient.fromFile(env.controlPlane.kubeconfig);

  describe('CRDs: the apiserver and the zod schemas judge every example alike', () => {
    const client = controlPlane();
    afterAll(() => client.close());

    async function apiserverAccepts(path: string, object: unknown): Promise<boolean | string> {
      try {
        await client.request('POST', path, { body: object, query: { dryRun: 'All' } });
        return true;
      } catch (error) {
        const status = (error as { statusCode?: number }).statusCode;
        if (status === 422 || status === 400) return false;
        return `unexpected answer: ${String(error)}`;
      }
    }

    it.each(CELLSET_EXAMPLES.map((example) => [example.name, example] as const))(
      'CellSet: %s',
      async (_name, example) => {
        const zod = safeParseCellSet(example.object).success;
        expect(zod).toBe(example.valid);
        expect(await apiserverAccepts('/apis/cells.cellfed.io/v1alpha1/cellsets', example.object)).toBe(zod);
      },
    );

    it.each(CELL_BACKUP_EXAMPLES.map((example) => [example.name, example] as const))(
      'CellBackup: %s',
      async (_name, example) => {
        const zod = CellBackupSchema.safeParse(example.object).success;
        expect(zod).toBe(example.valid);
        expect(
          await apiserverAccepts(
            '/apis/cells.cellfed.io/v1alpha1/namespaces/default/cellbackups',
            example.object,
          ),
        ).toBe(zod);
      },
    );
  });

  describe('informer', () => {
    const localOnly = env.provider === 'local' ? it : it.skip;

    localOnly('survives a kube-apiserver restart and a 410, and ends with the true state', async () => {
      const cell = env.cells[env.cells.length - 1]!;
      const client = KubeClient.fromFile(cell.kubeconfig);
      const registry = new Registry();
      const { logger } = memoryLogger('warn');
      const ns = 'default';
      const path = `/api/v1/namespaces/${ns}/configmaps`;
      const make = (name: string) =>
        client.request('POST', path, {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { test: 'informer' } } },
        });
      await make('before-restart');
      const informer = new Informer({
        cell: cell.id,
        resource: 'v1/configmaps',
        listWatch: resourceListWatch(client, CONFIGMAPS, { namespace: ns, labelSelector: 'test=informer' }),
        logger,
        registry,
        backoff: { initialMs: 200, maxMs: 1000 },
      });
      const events: InformerEvent[] = [];
      informer.addHandler((event) => events.push(event));
      const stop = new AbortController();
      const running = informer.run(stop.signal);
      try {
        await informer.waitForSync();
        expect(informer.keys()).toEqual([`${cell.id}/${ns}/before-restart`]);

        // Stop the apiserver, move etcd's revision on and compact it, so the watch the informer resumes
        // from its last resourceVersion is answered 410 once the apiserver is back.
        const cells = LocalCells.open(env.dir);
        const etcdUrl = `http://127.0.0.1:${readLocalState(env.dir).apiservers[cell.id]!.etcdClientPort}`;
        await cells.stop(cell.id, 'kube-apiserver');
        const put = await etcd(etcdUrl, '/v3/kv/put', {
          key: Buffer.from('/cellfed-test/advance').toString('base64'),
          value: Buffer.from(String(Date.now())).toString('base64'),
        });
        await etcd(etcdUrl, '/v3/kv/compaction', { revision: put.header.revision, physical: true });
        await cells.start(cell.id, 'kube-apiserver');

        await eventually(
          'the informer to relist after 410',
          async () =>
            ((await metricValue(registry, 'cellfed_informer_relists_total', { reason: 'expired' })) ?? 0) >=
              1 || undefined,
          60_000,
        );
        await make('after-restart');
        await client.request('DELETE', `${path}/before-restart`);
        await eventually(
          'the informer to see the change after the restart',
          async () => {
            const keys = informer.keys().sort();
            return keys.length === 1 && keys[0] === `${cell.id}/${ns}/after-restart` ? keys : undefined;
          },
          30_000,
        );
        expect(events.filter((event) => event.key.endsWith('/after-restart'))[0]).toMatchObject({
          type: 'added',
          lane: 'high',
        });
      } finally {
        stop.abort();
        await running;
        await client.request('DELETE', `${path}/after-restart`).catch(() => undefined);
        await client.close();
      }
    });
  });

  describe('cell pool', () => {
    const localOnly = env.provider === 'local' && env.cells.length >= 2 ? it : it.skip;

    localOnly(
      'engages a cell added to the CellSet within 5 s, warns about a missing Secret, tracks health across a restart, recreates on a Secret change, disengages a removed one',
      async () => {
        const [first, second] = env.cells;
        const client = controlPlane();
        const registry = new Registry();
        const { logger, lines } = memoryLogger('warn');
        const name = 'ck-pool-test';
        const entry = (id: string) => ({
          id,
          state: 'Normal',
          // No namespace: the pool reads the Secret of that name from its own credentials namespace (here the
          // router's, where the environment keeps the router's kubeconfigs of the cells).
          kubeconfigSecretRef: { name: cellSecretName(id) },
        });
        const cellSetPath = '/apis/cells.cellfed.io/v1alpha1/cellsets';
        const apply = (ids: string[]) =>
          client.request('PATCH', `${cellSetPath}/${name}`, {
            body: {
              apiVersion: 'cells.cellfed.io/v1alpha1',
              kind: 'CellSet',
              metadata: { name },
              spec: { cells: ids.map(entry) },
            },
            contentType: 'application/apply-patch+yaml',
            query: { fieldManager: 'controller-kit-e2e', force: true },
          });
        await apply([first!.id]);

        const pool = new CellPool({
          controlPlane: client,
          logger,
          registry,
          cellSetName: name,
          credentialsNamespace: credentialsNamespace('router'),
          probe: { periodMs: 300, timeoutMs: 1000, failureThreshold: 3, successThreshold: 2 },
        });
        const engaged: string[] = [];
        const stopped: string[] = [];
        pool.subscribe({
          engage: (cell: EngagedCell) => {
            engaged.push(cell.id);
            cell.signal.addEventListener('abort', () => stopped.push(cell.id), { once: true });
          },
        });
        const health: [string, CellHealth][] = [];
        pool.onHealthChange((cell, value) => health.push([cell, value]));
        const stop = new AbortController();
        const running = pool.run(stop.signal);
        try {
          await eventually('the first cell to be engaged', async () => pool.get(first!.id));

          const added = Date.now();
          await apply([first!.id, second!.id]);
          await eventually('the added cell to be engaged', async () => pool.get(second!.id), 5000);
          const engageMs = Date.now() - added;
          expect(engageMs).toBeLessThan(5000);
          expect(engaged).toContain(second!.id);
          await eventually('the added cell to be Healthy', async () =>
            pool.get(second!.id)?.health === 'Healthy' ? true : undefined,
          );

          // A cell whose Secret does not exist: not engaged, and a Warning Event on the CellSet says why.
          await apply([first!.id, second!.id, 'ghost']);
          const warning = await eventually('a Warning Event about the missing Secret', async () => {
            const events = await client.request<{
              items: { reason: string; note: string; type: string; regarding: { name: string } }[];
            }>('GET', '/apis/events.k8s.io/v1/namespaces/default/events');
            return events.items.find(
              (event) => event.regarding.name === name && event.reason === 'CellSecretMissing',
            );
          });
          expect(warning).toMatchObject({ type: 'Warning', note: expect.stringContaining('cell ghost') });
          expect(pool.get('ghost')).toBeUndefined();
          expect(pool.get(second!.id)).toBeDefined();

          const cells = LocalCells.open(env.dir);
          await cells.stop(second!.id, 'kube-apiserver');
          await eventually(
            'the stopped cell to go Unhealthy',
            async () =>
              health.some(([id, value]) => id === second!.id && value === 'Unhealthy') ? true : undefined,
            20_000,
          );
          expect(await metricValue(registry, 'cellfed_cell_healthy', { cell: second!.id })).toBe(0);
          const engagementsBefore = engaged.filter((id) => id === second!.id).length;
          await cells.start(second!.id, 'kube-apiserver');
          await eventually(
            'the restarted cell to be Healthy again',
            async () => (pool.get(second!.id)?.health === 'Healthy' ? true : undefined),
            30_000,
          );
          // Recovery recreated the cell's engagement, so subscribers start fresh watches.
          expect(engaged.filter((id) => id === second!.id).length).toBeGreaterThan(engagementsBefore);
          expect(await metricValue(registry, 'cellfed_cell_healthy', { cell: second!.id })).toBe(1);

          // New credentials in the Secret (here: the same kubeconfig, re-encoded) recreate the cell.
          const secretPath = `/api/v1/namespaces/${credentialsNamespace('router')}/secrets/${cellSecretName(first!.id)}`;
          const secret = await client.request<{ data: Record<string, string> }>('GET', secretPath);
          const kubeconfig = Buffer.from(secret.data['kubeconfig']!, 'base64').toString('utf8');
          const engagementsOfFirst = engaged.filter((id) => id === first!.id).length;
          await client.request('PATCH', secretPath, {
            body: { data: { kubeconfig: Buffer.from(`${kubeconfig}\n`).toString('base64') } },
            contentType: 'application/merge-patch+json',
          });
          await eventually('the cell to be recreated after its Secret changed', async () =>
            engaged.filter((id) => id === first!.id).length > engagementsOfFirst ? true : undefined,
          );
          expect(stopped).toContain(first!.id);
          expect(pool.get(first!.id)).toBeDefined();

          await apply([first!.id]);
          await eventually('the removed cell to be disengaged', async () =>
            pool.get(second!.id) === undefined ? true : undefined,
          );
          expect(stopped).toContain(second!.id);
          expect(pool.get(first!.id)).toBeDefined();
          // Only the ghost failed: no cell was judged before the Secrets were cached, every Event was written.
          const failures = lines.filter(
            (line) =>
              line.msg === 'reconcile failed for good; not retrying' ||
              line.msg === 'could not record an Event',
          );
          expect(failures.map((line) => line.key)).toEqual(failures.map(() => 'ghost'));
        } finally {
          stop.abort();
          await running;
          await client.request('DELETE', `${cellSetPath}/${name}`).catch(() => undefined);
          await client.close();
        }
      },
      90_000,
    );
  });

  describe('leader election', () => {
    it('a second process takes the Lease within 15 s of the first being killed; SIGTERM releases it', async () => {
      const lease = `ck-e2e-${Date.now()}`;
      const children: ChildProcess[] = [];
      const leading = new Map<ChildProcess, number>();
      const start = () => {
        const child = spawn(process.execPath, [CONTENDER, env.controlPlane.kubeconfig, lease], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        createInterface({ input: child.stdout! }).on('line', (line) => {
          if (line.includes('"leading"')) leading.set(child, Date.now());
        });
        children.push(child);
        return child;
      };
      try {
        const first = start();
        await eventually('the first process to lead', async () => leading.get(first), 30_000);
        const second = start();
        // The second has read the Lease and waits behind the first.
        await new Promise((resolve) => setTimeout(resolve, 3000));
        expect(leading.has(second)).toBe(false);
        const killed = Date.now();
        first.kill('SIGKILL');
        const took = await eventually('the second process to lead', async () => leading.get(second), 30_000);
        expect(took - killed).toBeLessThanOrEqual(15_000);

        // SIGTERM: the leader drains, releases the Lease and exits 0; a waiting process takes over at once.
        const third = start();
        await new Promise((resolve) => setTimeout(resolve, 3000));
        expect(leading.has(third)).toBe(false);
        const exited = new Promise<number | null>((resolve) => second.once('exit', (code) => resolve(code)));
        const terminated = Date.now();
        second.kill('SIGTERM');
        expect(await exited).toBe(0);
        const handedOver = await eventually(
          'the third process to lead',
          async () => leading.get(third),
          30_000,
        );
        // Released, so no wait for expiry: the next attempt (every 2 s) takes it.
        expect(handedOver - terminated).toBeLessThan(5000);
      } finally {
        for (const child of children) child.kill('SIGKILL');
      }
    }, 60_000);
  });
});
