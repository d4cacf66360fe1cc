import { parseCellSetSpec } from '@cellfed/api';
import { spawn } from 'node:child_process';
import { cellComponentKubeconfigPath } from '@cellfed/cells/local/local-provider.ts';
import { join } from 'node:path';

import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL, RoutingTable } from '@cellfed/hashing';
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

import { LocalCells } from '@cellfed/cells/local/local-cells.ts';
import { readLocalState } from '@cellfed/cells/local/local-state.ts';
import { createLogger } from '@cellfed/cells/log.ts';
import type { CellEntry } from '@cellfed/cells/provider.ts';
import {
  cellSetSpec,
  clientsFor,
  createCellSet,
  deleteCellSet,
  eventually,
  forEachInParallel,
  readCellSet,
  updateCellSet,
} from '../helpers/clients.ts';
import { cellAdder, describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import {
  kubectl,
  routerKubeconfig,
  startRouter,
  stopRouter,
  type RouterProcess,
} from '../helpers/router-process.ts';

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
      // Objects the informer holds carry their object version's one resourceVersion, the one a GET gives;
      // an update with it lands (the router gives the cell its own version).
      const cached = informer.get('w-7', namespace)!;
      const read = await apps.readNamespacedDeployment({ name: 'w-7', namespace });
      expect(cached.metadata!.resourceVersion).toBe(read.metadata!.resourceVersion);
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

  it('serves a streaming list (sendInitialEvents) as one apiserver does: each object once as ADDED, then one initial-events-end BOOKMARK', async () => {
    const { apps } = routerClients(kubeconfig);
    const listed = (await apps.listNamespacedDeployment({ namespace })).items.map(
      (item) => item.metadata!.name!,
    );
    expect(listed.length).toBeGreaterThan(5);
    const streamingList = async (config: string, rv = '') => {
      const answer = await kubectl(config, [
        'get',
        '--raw',
        `/apis/apps/v1/namespaces/${namespace}/deployments?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=3${rv ? `&resourceVersion=${encodeURIComponent(rv)}` : ''}`,
      ]);
      expect(answer).toMatchObject({ code: 0 });
      const events = answer.out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; object: V1Deployment });
      const end = events.findIndex(
        (event) =>
          event.type === 'BOOKMARK' &&
          event.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true',
      );
      return { events, end, initial: events.slice(0, end) };
    };
    // The shape, from one plain apiserver first (a cell, for the objects it holds).
    const cellKubeconfig = env.cells[0]!.kubeconfig;
    const plain = await streamingList(cellKubeconfig);
    expect(plain.end).toBeGreaterThanOrEqual(0);
    expect(plain.initial.every((event) => event.type === 'ADDED')).toBe(true);
    // Through the router: every object of every cell once, then the one BOOKMARK.
    const routed = await streamingList(kubeconfig);
    expect(routed.end).toBe(listed.length);
    expect(routed.initial.map((event) => event.type)).toEqual(listed.map(() => 'ADDED'));
    expect(routed.initial.map((event) => event.object.metadata!.name).sort()).toEqual([...listed].sort());
    expect(
      routed.events.filter((event) => event.object.metadata?.annotations?.['k8s.io/initial-events-end']),
    ).toHaveLength(1);
    // Its version is a start point: resuming from it does not send the objects again.
    const from = routed.events[routed.end]!.object.metadata!.resourceVersion!;
    const resumed = await kubectl(kubeconfig, [
      'get',
      '--raw',
      `/apis/apps/v1/namespaces/${namespace}/deployments?watch=1&timeoutSeconds=2&resourceVersion=${encodeURIComponent(from)}`,
    ]);
    expect(resumed).toMatchObject({ code: 0 });
    expect(resumed.out).not.toContain('"ADDED"');
  });

  it('starts a watch from a listed object’s resourceVersion, as one apiserver does: what happened after it, never 410', async () => {
    const { apps } = routerClients(kubeconfig);
    const list = await apps.listNamespacedDeployment({ namespace });
    const from = list.items.find((item) => item.metadata!.name === 'w-21')!.metadata!.resourceVersion!;
    const changed = ['w-21', 'w-22', 'w-23', 'w-24', 'w-25'];
    for (const name of changed)
      await apps.patchNamespacedDeployment(
        { name, namespace, body: { metadata: { labels: { since: 'item' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const resumed = await kubectl(kubeconfig, [
      'get',
      '--raw',
      `/apis/apps/v1/namespaces/${namespace}/deployments?watch=1&timeoutSeconds=2&resourceVersion=${encodeURIComponent(from)}`,
    ]);
    expect(resumed).toMatchObject({ code: 0 });
    const events = resumed.out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; object: V1Deployment });
    // As one apiserver replays its history after the version: in w-21's cell, what was made after it
    // (w-22 on) and the deletes (w-0 to w-4) come again; the other cells start from the list. Nothing
    // before w-21's version, and w-21 itself only as changed since.
    const number = (event: { object: V1Deployment }) => Number(event.object.metadata!.name!.slice(2));
    for (const event of events) {
      if (event.type === 'ADDED') expect(number(event)).toBeGreaterThan(21);
      else if (event.type === 'DELETED') expect(number(event)).toBeLessThan(5);
      else expect(event.type).toBe('MODIFIED');
    }
    const labelled = events
      .filter((event) => event.object.metadata!.labels?.['since'] === 'item')
      .map((event) => event.object.metadata!.name!);
    expect([...new Set(labelled)].sort()).toEqual(changed);
  });

  it('orders a label-selected watch through a router that holds nothing of its objects: whether each matched before a change is read from its cell', async () => {
    const { core } = routerClients(kubeconfig);
    const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const unselected = Array.from({ length: 12 }, (_, i) => `unselected-${i}`);
    const selected = ['selected-0', 'selected-1', 'selected-2'];
    await forEachInParallel([...unselected, ...selected], 8, (name) =>
      core.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name, labels: { selected: String(selected.includes(name)) } } },
      }),
    );
    // A router started now: its history begins after every one of these objects' last change, so it
    // cannot tell from what it holds whether a change of one was a selected object's.
    const fresh = await startRouter(env);
    try {
      const freshKubeconfig = routerKubeconfig(env, fresh, join(env.dir, 'router-fresh.kubeconfig'));
      const path = `/api/v1/namespaces/${namespace}/configmaps`;
      const listed = await kubectl(freshKubeconfig, [
        'get',
        '--raw',
        `${path}?labelSelector=selected%3Dtrue`,
      ]);
      expect(listed).toMatchObject({ code: 0 });
      const from = (JSON.parse(listed.out) as { metadata: { resourceVersion: string } }).metadata
        .resourceVersion;
      const watching = kubectl(freshKubeconfig, [
        'get',
        '--raw',
        `${path}?watch=1&labelSelector=selected%3Dtrue&timeoutSeconds=6&resourceVersion=${encodeURIComponent(from)}`,
      ]);
      // Changes the watch never gets (unselected before and after), in every cell, between those it gets:
      // without reading the cells, each would hold the next ones back until the router gave up waiting.
      const expected: string[] = [];
      for (const [i, name] of unselected.entries()) {
        await core.patchNamespacedConfigMap({ name, namespace, body: { data: { n: '1' } } }, mergePatch);
        const next = selected[(i - 3) / 4];
        if (i % 4 !== 3 || !next) continue;
        await core.patchNamespacedConfigMap(
          { name: next, namespace, body: { data: { n: '1' } } },
          mergePatch,
        );
        expected.push(`MODIFIED ${next}`);
      }
      // One that stops matching: a DELETED for the watch.
      await core.patchNamespacedConfigMap(
        { name: 'selected-0', namespace, body: { metadata: { labels: { selected: 'false' } } } },
        mergePatch,
      );
      expected.push('DELETED selected-0');
      const watched = await watching;
      expect(watched).toMatchObject({ code: 0 });
      const events = watched.out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; object: V1ConfigMap })
        .map((event) => `${event.type} ${event.object.metadata!.name}`);
      expect(events).toEqual(expected);
      const waited = fresh.lines.filter((line) => /gave up waiting|not read/.test(String(line['msg'])));
      expect(waited).toEqual([]);
    } finally {
      await stopRouter(fresh);
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

  it('keeps a watch flowing from the other cells while one cell is down, and resumes that cell when it is back', async () => {
    const { config, core } = routerClients(kubeconfig);
    const cellSet = (await readCellSet(env.controlPlane.kubeconfig, 'default')) as { spec: unknown };
    const table = RoutingTable.fromCellSet(parseCellSetSpec(cellSet.spec));
    /** A ConfigMap name the ring gives `cell`, so the router shows the copy written straight into it. */
    const nameIn = (cell: string, prefix: string) => {
      for (let i = 0; ; i++) {
        const name = `${prefix}-${i}`;
        if (table.route(table.keyOf({ namespace, name })).oldCell === cell) return name;
      }
    };
    const direct = new Map(env.cells.map((cell) => [cell.id, clientsFor(cell.kubeconfig).core]));
    for (const client of direct.values())
      await client.createNamespace({ body: { metadata: { name: namespace } } }).catch(() => undefined);
    const informer = makeInformer<V1ConfigMap>(config, `/api/v1/namespaces/${namespace}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace }),
    );
    const seen = recordEvents(informer);
    await informer.start();
    const [down, ...up] = env.cells.map((cell) => cell.id) as [string, ...string[]];
    const local = LocalCells.open(env.dir);
    try {
      await local.stop(down, 'kube-apiserver');
      const whileDown = up.map((cell) => nameIn(cell, `while-${down}-down`));
      for (const [i, cell] of up.entries()) {
        await direct
          .get(cell)!
          .createNamespacedConfigMap({ namespace, body: { metadata: { name: whileDown[i] } } });
      }
      await eventually('the other cells’ objects to reach the informer while one cell is down', async () =>
        whileDown.every((name) => informer.get(name, namespace)) ? true : undefined,
      );
    } finally {
      await local.start(down, 'kube-apiserver');
    }
    await local.restart(down, 'kube-controller-manager').catch(() => undefined);
    const afterUp = nameIn(down, `after-${down}-up`);
    await direct.get(down)!.createNamespacedConfigMap({ namespace, body: { metadata: { name: afterUp } } });
    await eventually(
      'the cell that came back to reach the informer again',
      async () => (informer.get(afterUp, namespace) ? true : undefined),
      60_000,
    );
    await informer.stop();
    expect(seen.filter((event) => event.type === 'delete')).toEqual([]);
  });
});

describeE2e(
  'cell router: a watch across migrations and a joining cell never sees a moved object vanish',
  () => {
    const env = e2eEnv();
    const { provider, runnable } = cellAdder(env);
    const log = createLogger({ level: 'warn' });
    const cellSetName = `moves-${Date.now()}`;
    const namespace = `moves-${Date.now()}`;
    const MOVES = 1000;
    let router: RouterProcess | undefined;
    let added: CellEntry | undefined;

    afterAll(async () => {
      await stopRouter(router);
      await deleteCellSet(env.controlPlane.kubeconfig, cellSetName);
      if (added) await provider.removeCell({ dir: env.dir, id: added.id, log });
    });

    runnable(
      `an informer through the router sees ${MOVES} moved objects as MODIFIED, then a 4th cell join, and ends equal to the cells`,
      async () => {
        const [one, two, three] = env.cells.map((cell) => cell.id) as [string, string, string];
        // As the rebalance controller: the cells' write fence lets only its identity write a fenced copy.
        const core = new Map(
          env.cells.map((cell) => [
            cell.id,
            clientsFor(cellComponentKubeconfigPath(env.dir, cell.id, 'rebalance-controller')).core,
          ]),
        );
        const spec = cellSetSpec({ [one]: 'Normal', [two]: 'Normal', [three]: 'Joining' });
        await createCellSet(env.controlPlane.kubeconfig, cellSetName, spec);
        for (const client of [...core.values(), clientsFor(env.controlPlane.kubeconfig).core])
          await client.createNamespace({ body: { metadata: { name: namespace } } });

        // Objects where the current ring puts them, until MOVES of them are to go to the joining cell.
        const table = RoutingTable.fromCellSet(parseCellSetSpec(spec));
        const placed: { name: string; oldCell: string; newCell: string }[] = [];
        while (placed.filter((object) => object.oldCell !== object.newCell).length < MOVES) {
          const name = `obj-${placed.length}`;
          placed.push({ name, ...table.route(table.keyOf({ namespace, name })) });
        }
        await forEachInParallel(placed, 16, ({ name, oldCell }) =>
          core.get(oldCell)!.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: {} } }),
        );

        router = await startRouter(env, { args: ['--cellset', cellSetName], cells: [one, two, three] });
        const { config, core: routed } = routerClients(
          routerKubeconfig(env, router, join(env.dir, `${cellSetName}.kubeconfig`)),
        );
        const informer = makeInformer<V1ConfigMap>(config, `/api/v1/namespaces/${namespace}/configmaps`, () =>
          routed.listNamespacedConfigMap({ namespace }),
        );
        const seen = recordEvents(informer);
        await informer.start();
        await eventually('the informer to list every object', async () =>
          placed.every(({ name }) => informer.get(name, namespace)) ? true : undefined,
        );

        // The design's label protocol, as the rebalance controller will run it.
        const move = async (name: string, from: string, to: string) => {
          const label = (value: string) =>
            core
              .get(from)!
              .patchNamespacedConfigMap(
                { name, namespace, body: { metadata: { labels: { [REBALANCE_STATUS_LABEL]: value } } } },
                setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
              );
          await label(MIGRATING);
          await core.get(to)!.createNamespacedConfigMap({
            namespace,
            body: { metadata: { name }, data: { copy: to } },
          });
          await label(MIGRATED);
          await core.get(from)!.deleteNamespacedConfigMap({ name, namespace });
        };
        const moving = placed.filter(({ oldCell, newCell }) => oldCell !== newCell);
        await forEachInParallel(moving, 8, ({ name, oldCell, newCell }) => move(name, oldCell, newCell));
        await eventually(
          'the informer to hold every moved object as its new copy',
          async () =>
            moving.every(({ name, newCell }) => informer.get(name, namespace)?.data?.['copy'] === newCell)
              ? true
              : undefined,
          60_000,
        );

        // A 4th cell, started now, joins the ring while the informer's watch stays open.
        added = await provider.addCell({ dir: env.dir, controllerManager: false, log });
        const four = added.id;
        core.set(four, clientsFor(cellComponentKubeconfigPath(env.dir, four, 'rebalance-controller')).core);
        await core.get(four)!.createNamespace({ body: { metadata: { name: namespace } } });
        const withFour = cellSetSpec({
          [one]: 'Normal',
          [two]: 'Normal',
          [three]: 'Normal',
          [four]: 'Joining',
        });
        await updateCellSet(env.controlPlane.kubeconfig, cellSetName, withFour);
        await eventually('the router to engage the new cell', async () =>
          router!.lines.some((line) => line.msg === 'cell engaged' && line.cell === four) ? true : undefined,
        );
        const joining = RoutingTable.fromCellSet(parseCellSetSpec(withFour));
        const intoFour = placed
          .map(({ name }) => ({ name, ...joining.route(joining.keyOf({ namespace, name })) }))
          .filter(({ newCell }) => newCell === four)
          .slice(0, 100);
        expect(intoFour.length).toBeGreaterThan(20);
        await forEachInParallel(intoFour, 8, ({ name, oldCell }) => move(name, oldCell, four));
        // New objects through the router while the cell joins: some of them land in it.
        const created = Array.from({ length: 40 }, (_, i) => `new-${i}`);
        await forEachInParallel(created, 8, (name) =>
          routed.createNamespacedConfigMap({
            namespace,
            body: { metadata: { name }, data: { copy: 'created' } },
          }),
        );

        // The truth: what the cells hold, read from each directly. Every object is in exactly one cell.
        const truth = new Map<string, string>();
        const inFour: string[] = [];
        for (const [cell, client] of core) {
          for (const item of (await client.listNamespacedConfigMap({ namespace })).items) {
            const name = item.metadata!.name!;
            if (name === 'kube-root-ca.crt') continue;
            expect({ name, cell, alsoIn: truth.has(name) }).toEqual({ name, cell, alsoIn: false });
            truth.set(name, item.metadata!.uid!);
            if (cell === four) inFour.push(name);
          }
        }
        expect(truth.size).toBe(placed.length + created.length);
        // New objects the new ring gives the joining cell were created in it: the informer can only learn of
        // them through the router's watch of that cell, opened while its stream stayed up.
        const createdInFour = created.filter(
          (name) => joining.route(joining.keyOf({ namespace, name })).newCell === four,
        );
        expect(createdInFour.length).toBeGreaterThan(0);
        expect(inFour.sort()).toEqual([...intoFour.map(({ name }) => name), ...createdInFour].sort());
        const cached = () =>
          new Map(
            informer
              .list(namespace)
              .filter((item) => item.metadata!.name !== 'kube-root-ca.crt')
              .map((item) => [item.metadata!.name!, item.metadata!.uid!] as const),
          );
        await eventually(
          "the informer's cache to equal the cells",
          async () => {
            const held = cached();
            return held.size === truth.size && [...truth].every(([name, uid]) => held.get(name) === uid)
              ? true
              : undefined;
          },
          60_000,
        );
        await informer.stop();
        expect(seen.filter((event) => event.type === 'delete')).toEqual([]);
        // Each move reached the handlers as an update (MODIFIED), not as a delete and an add.
        const updated = new Set(seen.filter((event) => event.type === 'update').map((event) => event.name));
        expect([...moving, ...intoFour].filter(({ name }) => !updated.has(name))).toEqual([]);
        // Every cell has its own kube-root-ca.crt, and so has the control plane: the informer holds one, the
        // control plane's, and it never switched or vanished on the way (one add, no delete above).
        const own = await clientsFor(env.controlPlane.kubeconfig).core.readNamespacedConfigMap({
          namespace,
          name: 'kube-root-ca.crt',
        });
        expect(
          informer
            .list(namespace)
            .filter((item) => item.metadata!.name === 'kube-root-ca.crt')
            .map((item) => item.metadata!.uid),
        ).toEqual([own.metadata!.uid]);
        expect(seen.filter((event) => event.name === 'kube-root-ca.crt').map((event) => event.type)).toEqual([
          'add',
        ]);
      },
      600_000,
    );
  },
);
