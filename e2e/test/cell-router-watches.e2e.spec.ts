import { spawn } from 'node:child_process';
import { join } from 'node:path';

import {
  MIGRATED,
  MIGRATING,
  REBALANCE_STATUS_LABEL,
  RoutingTable,
  parseCellSetSpec,
} from '@cellfed/hashing';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  makeInformer,
  setHeaderOptions,
  type KubernetesObject,
  type V1ConfigMap,
  type V1Deployment,
} from '@kubernetes/client-node';

import { LocalCells } from '../src/local/local-cells.ts';
import { readLocalState } from '../src/local/local-state.ts';
import { clientsFor, createCellSet, deleteCellSet, eventually, joiningCellSetSpec } from './clients.ts';
import { describeE2e, e2eEnv } from './e2e-env.ts';
import { kubectl, routerKubeconfig, startRouter, stopRouter, type RouterProcess } from './router-process.ts';

async function etcdCall(url: string, path: string, body: unknown): Promise<{ header: { revision: string } }> {
  const response = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { header: { revision: string } };
}

/** client-node API clients against the router. */
function routerClients(kubeconfig: string) {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  return { config, apps: config.makeApiClient(AppsV1Api), core: config.makeApiClient(CoreV1Api) };
}

/** Informer events by type and name, to assert what a handler saw. */
function recordEvents<T extends KubernetesObject>(informer: ReturnType<typeof makeInformer<T>>) {
  const seen: { type: string; name: string }[] = [];
  for (const type of ['add', 'update', 'delete'] as const) {
    informer.on(type, (object) => seen.push({ type, name: object.metadata!.name! }));
  }
  return seen;
}

describeE2e('cell router: watches across cells', () => {
  const env = e2eEnv();
  const namespace = `watch-${Date.now()}`;
  let router: RouterProcess;
  let kubeconfig = '';

  beforeAll(async () => {
    router = await startRouter(env);
    kubeconfig = routerKubeconfig(env, router, join(env.dir, 'router-watches.kubeconfig'));
    expect(await kubectl(kubeconfig, ['create', 'namespace', namespace])).toMatchObject({ code: 0 });
  });

  afterAll(() => stopRouter(router));

  it('a client-node informer and kubectl get -w through the router see every change in every cell', async () => {
    const { config, apps } = routerClients(kubeconfig);
    const path = `/apis/apps/v1/namespaces/${namespace}/deployments`;
    const informer = makeInformer<V1Deployment>(config, path, () =>
      apps.listNamespacedDeployment({ namespace }),
    );
    const seen = recordEvents(informer);
    await informer.start();
    const watcher = spawn(join(process.env['CELLFED_TOOLS_BIN']!, 'kubectl'), [
      '--kubeconfig',
      kubeconfig,
      '-n',
      namespace,
      'get',
      'deployments',
      '-w',
      '--output-watch-events',
    ]);
    let watched = '';
    watcher.stdout.on('data', (chunk: Buffer) => (watched += chunk.toString()));
    try {
      const names = Array.from({ length: 30 }, (_, i) => `w-${i}`);
      for (const name of names) {
        await apps.createNamespacedDeployment({
          namespace,
          body: {
            metadata: { name },
            spec: {
              paused: true,
              replicas: 0,
              selector: { matchLabels: { app: 'w' } },
              template: {
                metadata: { labels: { app: 'w' } },
                spec: { containers: [{ name: 'c', image: 'nginx' }] },
              },
            },
          },
        });
      }
      for (const name of names.slice(0, 5)) await apps.deleteNamespacedDeployment({ name, namespace });
      for (const name of names.slice(5, 10)) {
        await apps.patchNamespacedDeployment(
          { name, namespace, body: { metadata: { labels: { touched: 'yes' } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      }
      const truth = names.slice(5).sort();
      await eventually('the informer cache to equal the cells', async () =>
        JSON.stringify(
          informer
            .list(namespace)
            .map((item) => item.metadata!.name)
            .sort(),
        ) === JSON.stringify(truth)
          ? true
          : undefined,
      );
      await eventually('the informer to hold the patched labels', async () =>
        JSON.stringify(
          informer
            .list(namespace)
            .filter((item) => item.metadata?.labels?.['touched'] === 'yes')
            .map((item) => item.metadata!.name)
            .sort(),
        ) === JSON.stringify(names.slice(5, 10).sort())
          ? true
          : undefined,
      );
      // Objects the informer holds carry the composite version; an update with it lands (the router gives
      // the cell its own version).
      const cached = informer.get('w-7', namespace)!;
      expect(cached.metadata!.resourceVersion).toMatch(/^cf1\./);
      await apps.replaceNamespacedDeployment({
        name: 'w-7',
        namespace,
        body: { ...cached, metadata: { ...cached.metadata, labels: { replaced: 'yes' } } },
      });
      await eventually('the replaced object in the informer', async () =>
        informer.get('w-7', namespace)?.metadata?.labels?.['replaced'] === 'yes' ? true : undefined,
      );
      expect(
        seen
          .filter((event) => event.type === 'delete')
          .map((event) => event.name)
          .sort(),
      ).toEqual(names.slice(0, 5).sort());
      await eventually('kubectl get -w to show the changes', async () =>
        // Table rows (kubectl's own columns), one per event: EVENT NAME READY UP-TO-DATE AVAILABLE AGE.
        names.every((name) => new RegExp(`(^|\\n)ADDED\\s+${name}\\s+0/0`).test(watched)) &&
        /(^|\n)DELETED\s+w-0\s/.test(watched)
          ? true
          : undefined,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; kubectl printed:\n${watched.slice(0, 2000)}`);
      });
    } finally {
      watcher.kill();
      await informer.stop();
    }
  });

  it('resumes a watch from a composite version, and answers a version the cells no longer have with 410', async () => {
    const { apps } = routerClients(kubeconfig);
    const list = await apps.listNamespacedDeployment({ namespace });
    const from = list.metadata!.resourceVersion!;
    await apps.patchNamespacedDeployment(
      { name: 'w-20', namespace, body: { metadata: { labels: { after: 'list' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const resumed = await kubectl(kubeconfig, [
      'get',
      '--raw',
      `/apis/apps/v1/namespaces/${namespace}/deployments?watch=1&timeoutSeconds=2&resourceVersion=${encodeURIComponent(from)}`,
    ]);
    const events = resumed.out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; object: V1Deployment });
    // Only what happened after the list (the label, and perhaps a cell's controller writing status), not the
    // 25 objects again.
    expect(events.filter((event) => event.type !== 'MODIFIED')).toEqual([]);
    expect(
      events.some(
        (event) =>
          event.object.metadata!.name === 'w-20' && event.object.metadata!.labels?.['after'] === 'list',
      ),
    ).toBe(true);

    // Compact one cell's etcd past that version and restart its apiserver (its watch cache starts afresh):
    // resuming from the list's version is now impossible in that cell, as with one apiserver.
    const cell = env.cells.at(-1);
    const state = readLocalState(env.dir);
    const etcd = `http://127.0.0.1:${state.apiservers[cell!.id]!.etcdClientPort}`;
    const local = LocalCells.open(env.dir);
    await local.stop(cell!.id, 'kube-apiserver');
    const put = await etcdCall(etcd, '/v3/kv/put', {
      key: Buffer.from('/cellfed-test/advance').toString('base64'),
      value: Buffer.from(String(Date.now())).toString('base64'),
    });
    await etcdCall(etcd, '/v3/kv/compaction', { revision: put.header.revision, physical: true });
    await local.start(cell!.id, 'kube-apiserver');
    // Its controller manager may have given up its lease while the apiserver was away: start it afresh so
    // later suites find the cell as it was.
    // (An environment without one has none to restart.)
    await local.restart(cell!.id, 'kube-controller-manager').catch(() => undefined);
    const expired = await kubectl(kubeconfig, [
      'get',
      '--raw',
      `/apis/apps/v1/namespaces/${namespace}/deployments?watch=1&timeoutSeconds=2&resourceVersion=${encodeURIComponent(from)}`,
    ]);
    expect(expired.out).toMatch(/"code":410|Expired|too old/);
  });
});

describeE2e('cell router: a watch across a migration never sees a moved object vanish', () => {
  const env = e2eEnv();
  const withTwoCells = env.cells.length >= 2 ? it : it.skip;
  const cellSetName = `moves-${Date.now()}`;
  const namespace = `moves-${Date.now()}`;
  let router: RouterProcess | undefined;

  afterAll(async () => {
    await stopRouter(router);
    await deleteCellSet(env.controlPlane.kubeconfig, cellSetName);
  });

  withTwoCells(
    'an informer through the router sees moved objects as MODIFIED, with the new copies',
    async () => {
      const [oldCell, newCell] = env.cells;
      const spec = joiningCellSetSpec(oldCell!.id, newCell!.id);
      await createCellSet(env.controlPlane.kubeconfig, cellSetName, spec);
      const table = RoutingTable.fromCellSet(parseCellSetSpec(spec));
      const old = clientsFor(oldCell!.kubeconfig).core;
      const fresh = clientsFor(newCell!.kubeconfig).core;
      for (const core of [old, fresh, clientsFor(env.controlPlane.kubeconfig).core])
        await core.createNamespace({ body: { metadata: { name: namespace } } });
      // Objects are where the current ring puts them: all in the old cell; some of them move.
      const names = Array.from({ length: 60 }, (_, i) => `obj-${i}`);
      const moving = names.filter(
        (name) => table.route(table.keyOf({ namespace, name })).newCell === newCell!.id,
      );
      expect(moving.length).toBeGreaterThan(5);
      for (const name of names) {
        await old.createNamespacedConfigMap({
          namespace,
          body: { metadata: { name }, data: { copy: 'old' } },
        });
      }

      router = await startRouter(env, {
        args: ['--cellset', cellSetName],
        cells: [oldCell!.id, newCell!.id],
      });
      const { config, core } = routerClients(
        routerKubeconfig(env, router, join(env.dir, `${cellSetName}.kubeconfig`)),
      );
      const informer = makeInformer<V1ConfigMap>(config, `/api/v1/namespaces/${namespace}/configmaps`, () =>
        core.listNamespacedConfigMap({ namespace }),
      );
      const seen = recordEvents(informer);
      await informer.start();
      await eventually('the informer to list every object', async () =>
        names.every((name) => informer.get(name, namespace)) ? true : undefined,
      );

      // The design's label protocol, object by object, as the rebalance controller will run it.
      const label = (name: string, value: string) =>
        old.patchNamespacedConfigMap(
          { name, namespace, body: { metadata: { labels: { [REBALANCE_STATUS_LABEL]: value } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      for (const name of moving) {
        await label(name, MIGRATING);
        await fresh.createNamespacedConfigMap({
          namespace,
          body: { metadata: { name }, data: { copy: 'new' } },
        });
        await label(name, MIGRATED);
        await old.deleteNamespacedConfigMap({ name, namespace });
      }
      await eventually('the informer to hold every moved object as its new copy', async () =>
        moving.every((name) => informer.get(name, namespace)?.data?.['copy'] === 'new') ? true : undefined,
      );
      await informer.stop();
      expect(seen.filter((event) => event.type === 'delete')).toEqual([]);
      const held = informer.list(namespace).map((item) => item.metadata!.name!);
      expect(held.filter((name) => name.startsWith('obj-')).sort()).toEqual([...names].sort());
      // Every cell has its own kube-root-ca.crt: shown once, from the cell the ring names for it.
      expect(held.filter((name) => name === 'kube-root-ca.crt')).toHaveLength(1);
    },
  );
});
