import { join } from 'node:path';

import { AppsV1Api, KubeConfig, type V1Deployment } from '@kubernetes/client-node';

import { clientsFor, forEachInParallel } from '../helpers/clients.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import {
  kubectl,
  routerKubeconfig,
  startRouter,
  stopRouter,
  type RouterProcess,
} from '../helpers/router-process.ts';

const COUNT = 3000;

describeE2e('cell router: lists across cells', () => {
  const env = e2eEnv();
  const namespace = `lists-${Date.now()}`;
  const cells = env.cells.map((cell) => ({ id: cell.id, apps: clientsFor(cell.kubeconfig).apps }));
  let router: RouterProcess;
  let kubeconfig = '';
  let apps: AppsV1Api;

  const deployment = (name: string): V1Deployment => ({
    metadata: { name, labels: { batch: name.endsWith('0') ? 'tens' : 'rest' } },
    spec: {
      // Paused with no replicas: the cells' controllers leave them alone.
      paused: true,
      replicas: 0,
      selector: { matchLabels: { app: 'list' } },
      template: {
        metadata: { labels: { app: 'list' } },
        spec: { containers: [{ name: 'c', image: 'nginx' }] },
      },
    },
  });

  /** Every Deployment of the test namespace, read directly from each cell. */
  async function truth(): Promise<string[]> {
    const names: string[] = [];
    for (const cell of cells) {
      const list = await cell.apps.listNamespacedDeployment({ namespace });
      names.push(...list.items.map((item) => item.metadata!.name!));
    }
    return names.sort();
  }

  beforeAll(async () => {
    router = await startRouter(env);
    kubeconfig = routerKubeconfig(env, router, join(env.dir, 'router-lists.kubeconfig'));
    const config = new KubeConfig();
    config.loadFromFile(kubeconfig);
    apps = config.makeApiClient(AppsV1Api);
    expect(await kubectl(kubeconfig, ['create', 'namespace', namespace])).toMatchObject({ code: 0 });
    const indexes = Array.from({ length: COUNT }, (_, i) => i);
    await forEachInParallel(indexes, 16, (i) =>
      apps.createNamespacedDeployment({ namespace, body: deployment(`d-${String(i).padStart(4, '0')}`) }),
    );
  }, 300_000);

  afterAll(async () => {
    // Leave the cells' controllers nothing to chew on: one deletecollection through the router, every cell.
    await apps?.deleteCollectionNamespacedDeployment({ namespace }).catch(() => undefined);
    await stopRouter(router);
  });

  it(`lists ${COUNT} Deployments spread over the cells: every one once, in name order, one composite version`, async () => {
    const expected = await truth();
    expect(expected).toHaveLength(COUNT);
    const perCell = await Promise.all(cells.map((cell) => cell.apps.listNamespacedDeployment({ namespace })));
    expect(perCell.filter((list) => list.items.length > 0).length).toBe(cells.length);

    const listed = await apps.listNamespacedDeployment({ namespace });
    expect(listed.items.map((item) => item.metadata!.name)).toEqual(expected);
    expect(listed.metadata?.resourceVersion).toMatch(/^cf1\./);

    const selected = await apps.listNamespacedDeployment({ namespace, labelSelector: 'batch=tens' });
    expect(selected.items.map((item) => item.metadata!.name)).toEqual(
      expected.filter((name) => name.endsWith('0')),
    );

    // The same across namespaces (cluster-wide), narrowed to this namespace's objects.
    const everywhere = await apps.listDeploymentForAllNamespaces({ labelSelector: 'batch' });
    expect(everywhere.items.filter((item) => item.metadata!.namespace === namespace)).toHaveLength(COUNT);
  });

  it('walks every Deployment exactly once with limit 100 and continue', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await apps.listNamespacedDeployment({
        namespace,
        limit: 100,
        ...(token ? { _continue: token } : {}),
      });
      expect(page.items.length).toBeLessThanOrEqual(100);
      seen.push(...page.items.map((item) => item.metadata!.name!));
      token = page.metadata?._continue;
      pages += 1;
    } while (token && pages < 100);
    expect(seen).toEqual(await truth());
    expect(pages).toBeGreaterThanOrEqual(COUNT / 100);
  });

  it('kubectl get shows every row with the columns of one apiserver, in chunks', async () => {
    const out = await kubectl(kubeconfig, ['-n', namespace, 'get', 'deployments', '--chunk-size=250']);
    expect(out.code).toBe(0);
    const lines = out.out.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/);
    expect(lines).toHaveLength(COUNT + 1);
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual(await truth());
    const wide = await kubectl(kubeconfig, ['-n', namespace, 'get', 'deployment', 'd-0001', '-o', 'wide']);
    expect(wide.out.split('\n')[0]).toMatch(/CONTAINERS\s+IMAGES\s+SELECTOR/);
  });

  it('answers a continue token or resourceVersion it did not issue with 400, and a list of a global resource as one apiserver', async () => {
    const bad = await kubectl(kubeconfig, [
      'get',
      '--raw',
      `/apis/apps/v1/namespaces/${namespace}/deployments?limit=1&continue=bogus`,
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.out).toContain('continue key is not valid');
    // One object version has one resourceVersion: the listed item's is its GET's, and a list from it is
    // "not older than" it, as on one apiserver.
    const [one] = (await apps.listNamespacedDeployment({ namespace, limit: 1 })).items;
    const single = await apps.readNamespacedDeployment({ namespace, name: one!.metadata!.name! });
    const listedVersion = one!.metadata!.resourceVersion!;
    expect(listedVersion).toMatch(/^[0-9]+$/);
    expect(single.metadata!.resourceVersion).toBe(listedVersion);
    const notOlder = await kubectl(kubeconfig, [
      'get',
      '--raw',
      `/apis/apps/v1/namespaces/${namespace}/deployments?resourceVersion=${listedVersion}&resourceVersionMatch=NotOlderThan`,
    ]);
    expect(notOlder.code).toBe(0);
    const fromList = JSON.parse(notOlder.out) as { items: V1Deployment[] };
    expect(
      fromList.items.find((item) => item.metadata!.name === one!.metadata!.name)?.metadata,
    ).toMatchObject({
      resourceVersion: listedVersion,
    });
    // And a read of that one object at it, as "not older than" it in its cell.
    const atListed = await kubectl(kubeconfig, [
      'get',
      '--raw',
      `/apis/apps/v1/namespaces/${namespace}/deployments/${one!.metadata!.name!}?resourceVersion=${encodeURIComponent(listedVersion)}`,
    ]);
    expect(atListed.code).toBe(0);
    expect(JSON.parse(atListed.out)).toMatchObject({
      metadata: { name: one!.metadata!.name!, uid: single.metadata!.uid! },
    });
    const namespaces = await kubectl(kubeconfig, ['get', 'namespace', namespace, '-o', 'name']);
    expect(namespaces).toEqual({ code: 0, out: `namespace/${namespace}\n` });
  });

  it('lists none of a namespace’s objects once kubectl delete namespace has returned, though the cells still hold them', async () => {
    const gone = `${namespace}-gone`;
    expect(await kubectl(kubeconfig, ['create', 'namespace', gone])).toMatchObject({ code: 0 });
    await forEachInParallel(
      Array.from({ length: 12 }, (_, i) => `g-${i}`),
      4,
      (name) => apps.createNamespacedDeployment({ namespace: gone, body: deployment(name) }),
    );
    const listed = async () =>
      (await apps.listNamespacedDeployment({ namespace: gone })).items.map((item) => item.metadata!.name!);
    expect(await listed()).toHaveLength(12);
    // kubectl waits until the control plane's namespace is gone; no rebalance controller runs here, so the
    // cells keep theirs (and the objects) as they would until the mirror's next pass.
    expect(await kubectl(kubeconfig, ['delete', 'namespace', gone, '--wait=true'])).toMatchObject({
      code: 0,
    });
    const inCells = await Promise.all(
      cells.map(async (cell) => (await cell.apps.listNamespacedDeployment({ namespace: gone })).items.length),
    );
    expect(inCells.reduce((sum, count) => sum + count, 0)).toBe(12);
    expect(await listed()).toEqual([]);
    const all = await apps.listDeploymentForAllNamespaces();
    expect(all.items.filter((item) => item.metadata!.namespace === gone)).toEqual([]);
    // What the mirror would do: the cells' namespaces go too.
    for (const cell of env.cells)
      await kubectl(cell.kubeconfig, ['delete', 'namespace', gone, '--wait=false']);
  });
});
