import { parseCellSet, parseCellSetSpec, LOADED_GENERATION_ANNOTATION } from '@cellfed/api';
import { readFileSync } from 'node:fs';
import { cellComponentKubeconfigPath } from '@cellfed/cells/local/local-provider.ts';
import { join } from 'node:path';

import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL, RoutingTable } from '@cellfed/hashing';
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { Agent, request } from 'undici';

import { cellSecretName } from '@cellfed/cells/control-plane/cell-secrets.ts';
import { type KubeObject, routerLeaseName } from '@cellfed/federation';

import {
  clientsFor,
  createCellSet,
  deleteCellSet,
  eventually,
  joiningCellSetSpec,
  readCellSet,
} from '../helpers/clients.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import { pickName } from '../helpers/join-fixture.ts';
import {
  controlPlanePki,
  kubectl,
  routerKubeconfig,
  startRouter,
  stopRouter,
  type RouterProcess,
} from '../helpers/router-process.ts';

describeE2e('cell router: single objects reach the cell the ring names', () => {
  const env = e2eEnv();
  const pki = controlPlanePki(env);
  let router: RouterProcess;
  let url = '';
  let apps: AppsV1Api;
  let core: CoreV1Api;
  const cells = Object.fromEntries(env.cells.map((cell) => [cell.id, clientsFor(cell.kubeconfig)]));
  const namespace = `router-${Date.now()}`;

  /** Where the ring puts namespace/name, from the CellSet as stored. */
  async function cellOf(name: string): Promise<string> {
    const cellSet = await readCellSet(env.controlPlane.kubeconfig, env.cellSet);
    const table = RoutingTable.fromCellSet(parseCellSet(cellSet).spec);
    return table.route(table.keyOf({ namespace, name })).oldCell;
  }

  let table: RoutingTable;
  /** Where the ring puts namespace/name, by the CellSet as the suite began. */
  const cellOfSync = (name: string) => table.route(table.keyOf({ namespace, name })).oldCell;

  /** The cells that hold Deployment `name` in the test namespace. */
  async function holders(name: string): Promise<string[]> {
    const found: string[] = [];
    for (const [id, clients] of Object.entries(cells)) {
      try {
        await clients.apps.readNamespacedDeployment({ name, namespace });
        found.push(id);
      } catch {
        // not in this cell
      }
    }
    return found;
  }

  const deployment = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, ...extra },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'nginx' }] },
      },
    },
  });

  beforeAll(async () => {
    router = await startRouter(env);
    url = router.url;
    const config = new KubeConfig();
    config.loadFromFile(env.controlPlane.kubeconfig);
    config.clusters = config.clusters.map((cluster) => ({ ...cluster, server: url }));
    apps = config.makeApiClient(AppsV1Api);
    core = config.makeApiClient(CoreV1Api);
    // Namespaces are global: created in the control plane through the router, which creates it in a cell
    // ahead of the first write there.
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const cellSet = await readCellSet(env.controlPlane.kubeconfig, env.cellSet);
    table = RoutingTable.fromCellSet(parseCellSet(cellSet).spec);
  });

  afterAll(() => stopRouter(router));

  it('creates, reads, patches, scales and deletes a Deployment in the cell the ring names, and only there', async () => {
    const name = 'web';
    const expected = await cellOf(name);
    await apps.createNamespacedDeployment({ namespace, body: deployment(name) });
    expect(await holders(name)).toEqual([expected]);

    const read = await apps.readNamespacedDeployment({ name, namespace });
    expect(read.metadata?.name).toBe(name);

    await apps.patchNamespacedDeployment(
      { name, namespace, body: { metadata: { labels: { patched: 'yes' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const direct = await cells[expected]!.apps.readNamespacedDeployment({ name, namespace });
    expect(direct.metadata?.labels).toMatchObject({ patched: 'yes' });

    await apps.patchNamespacedDeploymentScale(
      { name, namespace, body: { spec: { replicas: 3 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect((await cells[expected]!.apps.readNamespacedDeployment({ name, namespace })).spec?.replicas).toBe(
      3,
    );

    await apps.deleteNamespacedDeployment({ name, namespace });
    expect(await holders(name)).toEqual([]);
  });

  it('puts Deployments with different names in the cells the ring names for each', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `spread-${i}`);
    for (const name of names) await apps.createNamespacedDeployment({ namespace, body: deployment(name) });
    const placed = new Set<string>();
    for (const name of names) {
      const expected = await cellOf(name);
      expect(await holders(name)).toEqual([expected]);
      placed.add(expected);
    }
    // Twelve keys over three cells: more than one cell is used (a router sending all to one would fail).
    expect(placed.size).toBeGreaterThan(1);
  });

  it('names a generateName object itself and routes it by that name', async () => {
    const created = await apps.createNamespacedDeployment({
      namespace,
      body: deployment('', { name: undefined, generateName: 'gen-' }),
    });
    const name = created.metadata!.name!;
    expect(name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(await holders(name)).toEqual([await cellOf(name)]);
  });

  it('keeps global resources in the control plane and cellular ones out of it', async () => {
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((item) => item.metadata?.name)).toContain(namespace);
    const config = await core
      .createNamespacedConfigMap({
        namespace,
        body: { metadata: { name: 'not-cellular-here' }, data: { a: 'b' } },
      })
      .catch((error: unknown) => error);
    // ConfigMaps are cellular by default: created in the ring's cell, not in the control plane.
    expect(config).toMatchObject({ metadata: { name: 'not-cellular-here' } });
    const inControlPlane = await clientsFor(env.controlPlane.kubeconfig)
      .core.readNamespacedConfigMap({ name: 'not-cellular-here', namespace })
      .catch(() => undefined);
    expect(inControlPlane).toBeUndefined();
  });

  it('gives out each node port once across cells, as one apiserver does, and frees it when its Service goes', async () => {
    // Two names in different cells: their cells' own allocators would each give out the same port.
    const first = pickName('np', (name) => cellOfSync(name) === env.cells[0]!.id);
    const other = (prefix: string) => pickName(prefix, (name) => cellOfSync(name) === env.cells[1]!.id);
    const nodePortService = (name: string, nodePort?: number) => ({
      metadata: { name },
      spec: {
        type: 'NodePort',
        selector: { app: name },
        ports: [{ port: 80, ...(nodePort ? { nodePort } : {}) }],
      },
    });
    const made = await core.createNamespacedService({ namespace, body: nodePortService(first) });
    const port = made.spec!.ports![0]!.nodePort!;
    const second = other('np-other');
    const refused = await core
      .createNamespacedService({ namespace, body: nodePortService(second, port) })
      .catch((error: unknown) => error as { code?: number; body?: string });
    expect(refused).toMatchObject({ code: 422 });
    expect(JSON.parse(String((refused as { body?: string }).body))).toMatchObject({
      kind: 'Status',
      reason: 'Invalid',
      message: `Service "${second}" is invalid: spec.ports[0].nodePort: Invalid value: ${port}: provided port is already allocated`,
    });
    // One the control plane's allocator chose, and the cell holds what the caller was told.
    const chosen = await core.createNamespacedService({ namespace, body: nodePortService(second) });
    const chosenPort = chosen.spec!.ports![0]!.nodePort!;
    expect(chosenPort).not.toBe(port);
    const inCell = await cells[env.cells[1]!.id]!.core.readNamespacedService({ name: second, namespace });
    expect(inCell.spec?.ports?.[0]?.nodePort).toBe(chosenPort);
    // A patch to a port another cell's Service holds is refused too (a JSON patch, as kubectl sends one).
    const patched = await core
      .patchNamespacedService(
        { name: second, namespace, body: [{ op: 'replace', path: '/spec/ports/0/nodePort', value: port }] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      )
      .catch((error: unknown) => error);
    expect(patched).toMatchObject({ code: 422 });
    // The claims stay the router's: in cellfed's namespace of the control plane, none in the tenant's;
    // listed through the router, each Service is there once.
    const controlPlaneCore = clientsFor(env.controlPlane.kubeconfig).core;
    const claimed = await controlPlaneCore.listNamespacedService({
      namespace: 'cellfed-system',
      labelSelector: 'cellfed.io/node-port-claim',
    });
    expect(claimed.items.map((item) => item.metadata?.annotations?.['cellfed.io/node-ports-of'])).toEqual(
      expect.arrayContaining([`${namespace}/${first}`, `${namespace}/${second}`]),
    );
    expect((await controlPlaneCore.listNamespacedService({ namespace })).items).toEqual([]);
    const listed = await core.listNamespacedService({ namespace });
    expect(listed.items.map((item) => item.metadata?.name).sort()).toEqual([first, second].sort());
    // Deleted through the router, its port is free at once.
    await core.deleteNamespacedService({ name: first, namespace });
    const third = other('np-third');
    const reused = await core.createNamespacedService({ namespace, body: nodePortService(third, port) });
    expect(reused.spec?.ports?.[0]?.nodePort).toBe(port);
    // Made a ClusterIP Service, it frees its port as well.
    await core.patchNamespacedService(
      {
        name: second,
        namespace,
        body: { spec: { type: 'ClusterIP', ports: [{ port: 80, nodePort: null }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const fourth = other('np-fourth');
    const freed = await core.createNamespacedService({
      namespace,
      body: nodePortService(fourth, chosenPort),
    });
    expect(freed.spec?.ports?.[0]?.nodePort).toBe(chosenPort);
  });

  it('answers 401 with a Status to a client without credentials, and 400 to a body it cannot read', async () => {
    const dispatcher = new Agent({ connect: { ca: readFileSync(join(pki, 'ca.crt')) } });
    try {
      const anonymous = await request(`${url}/apis/apps/v1/namespaces/${namespace}/deployments/web`, {
        dispatcher,
      });
      expect(anonymous.statusCode).toBe(401);
      expect(await anonymous.body.json()).toMatchObject({
        kind: 'Status',
        code: 401,
        reason: 'Unauthorized',
      });
    } finally {
      await dispatcher.close();
    }
    const admin = new Agent({
      connect: {
        ca: readFileSync(join(pki, 'ca.crt')),
        cert: readFileSync(join(pki, 'admin.crt')),
        key: readFileSync(join(pki, 'admin.key')),
      },
    });
    try {
      const broken = await request(`${url}/apis/apps/v1/namespaces/${namespace}/deployments`, {
        dispatcher: admin,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"metadata": {"name": ',
      });
      expect(broken.statusCode).toBe(400);
      expect(await broken.body.json()).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    } finally {
      await admin.close();
    }
    // The access log names the outcome; the caller's credentials never appear in it.
    await eventually('the access log line', async () =>
      router.lines.some((line) => line.msg === 'request' && line.code === 401) ? true : undefined,
    );
    expect(router.lines.some((line) => line.msg === 'request' && line.code === 200 && line.cell)).toBe(true);
  });
});

describeE2e('cell router: writes to a migrating object are fenced until it has moved', () => {
  const env = e2eEnv();
  const withTwoCells = env.cells.length >= 2 ? it : it.skip;
  let router: RouterProcess | undefined;
  const cellSetName = `fence-${Date.now()}`;
  const namespace = 'default';

  afterAll(async () => {
    await stopRouter(router);
    await deleteCellSet(env.controlPlane.kubeconfig, cellSetName);
  });

  withTwoCells(
    'kubectl retries a fenced write by itself and it lands in the new cell',
    async () => {
      const [oldCell, newCell] = env.cells;
      const spec = joiningCellSetSpec(oldCell!.id, newCell!.id);
      await createCellSet(env.controlPlane.kubeconfig, cellSetName, spec);
      // A name that moves from the old cell to the joining one (routing case 2).
      const table = RoutingTable.fromCellSet(parseCellSetSpec(spec));
      const name = Array.from({ length: 200 }, (_, i) => `moving-${cellSetName}-${i}`).find(
        (candidate) => table.route(table.keyOf({ namespace, name: candidate })).case === 2,
      )!;
      // Acting as the rebalance controller: the cell's write fence lets only its identity write a fenced copy.
      const old = clientsFor(cellComponentKubeconfigPath(env.dir, oldCell!.id, 'rebalance-controller')).core;
      const fresh = clientsFor(newCell!.kubeconfig).core;
      await old.createNamespacedConfigMap({
        namespace,
        body: {
          metadata: { name, labels: { [REBALANCE_STATUS_LABEL]: MIGRATING } },
          data: { step: 'copying' },
        },
      });

      router = await startRouter(env, {
        args: ['--cellset', cellSetName],
        cells: [oldCell!.id, newCell!.id],
      });
      const kubeconfig = routerKubeconfig(env, router, join(env.dir, `router-${cellSetName}.kubeconfig`));
      const inNamespace = (...args: string[]) => kubectl(kubeconfig, ['-n', namespace, ...args]);

      // Reads go to the old cell while it migrates.
      const read = await inNamespace('get', 'configmap', name, '-o', 'jsonpath={.data.step}');
      expect(read).toEqual({ code: 0, out: 'copying' });

      // A write is fenced: kubectl waits and retries by itself. Meanwhile the move completes.
      const started = Date.now();
      const write = inNamespace('label', 'configmap', name, 'written=through-router');
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(router.lines.some((line) => line.msg === 'request' && line.code === 429)).toBe(true);
      await fresh.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name }, data: { step: 'copied' } },
      });
      await old.patchNamespacedConfigMap(
        { name, namespace, body: { metadata: { labels: { [REBALANCE_STATUS_LABEL]: MIGRATED } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const result = await write;
      expect(result.code).toBe(0);
      expect(Date.now() - started).toBeGreaterThan(2500);
      expect((await fresh.readNamespacedConfigMap({ name, namespace })).metadata?.labels).toMatchObject({
        written: 'through-router',
      });
      expect((await old.readNamespacedConfigMap({ name, namespace })).metadata?.labels).not.toHaveProperty(
        'written',
      );
    },
    90_000,
  );
});

describeE2e('cell router: publishes the CellSet generation it routes with', () => {
  const env = e2eEnv();
  const controlPlane = clientsFor(env.controlPlane.kubeconfig);
  const cellSetName = `lease-${Date.now()}`;
  const replica = `e2e-${cellSetName}`;
  let router: RouterProcess | undefined;

  afterAll(async () => {
    await stopRouter(router);
    await deleteCellSet(env.controlPlane.kubeconfig, cellSetName);
  });

  it('writes its Lease with the loaded generation, follows a CellSet change, and removes it on stop', async () => {
    const cells = env.cells.map((cell) => ({
      id: cell.id,
      state: 'Normal',
      weight: 1,
      kubeconfigSecretRef: { name: cellSecretName(cell.id) },
    }));
    await createCellSet(env.controlPlane.kubeconfig, cellSetName, { cells });
    router = await startRouter(env, { args: ['--cellset', cellSetName, '--replica-id', replica] });
    const coordination = new KubeConfig();
    coordination.loadFromFile(env.controlPlane.kubeconfig);
    const leases = coordination.makeApiClient(CoordinationV1Api);
    const leaseName = routerLeaseName(replica);
    const generationInLease = async () => {
      const lease = await leases
        .readNamespacedLease({ name: leaseName, namespace: 'cellfed-system' })
        .catch(() => undefined);
      return lease?.metadata?.annotations?.[LOADED_GENERATION_ANNOTATION];
    };
    const generationOf = async () =>
      String(
        ((await readCellSet(env.controlPlane.kubeconfig, cellSetName)) as KubeObject).metadata.generation,
      );
    const first = await generationOf();
    await eventually('the Lease with the first generation', async () =>
      (await generationInLease()) === first ? true : undefined,
    );

    // A weight change, as `kubectl cells weight` writes it (the CRD refuses one without previousWeight).
    Object.assign(cells[0]!, { weight: 2, previousWeight: 1 });
    await controlPlane.custom.patchClusterCustomObject(
      {
        group: 'cells.cellfed.io',
        version: 'v1alpha1',
        plural: 'cellsets',
        name: cellSetName,
        body: { spec: { cells } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const second = await generationOf();
    expect(Number(second)).toBeGreaterThan(Number(first));
    await eventually('the Lease with the new generation', async () =>
      (await generationInLease()) === second ? true : undefined,
    );

    await stopRouter(router);
    expect(await generationInLease()).toBeUndefined();
  });
});

describeE2e('cell router: serves the certificate of a TLS Secret', () => {
  const env = e2eEnv();
  const controlPlane = clientsFor(env.controlPlane.kubeconfig);
  // The one Secret of the release namespace the chart lets the router read (router.tls.secretName).
  const secretName = 'cellfed-router-tls';
  let router: RouterProcess | undefined;

  afterAll(async () => {
    await stopRouter(router);
    await controlPlane.core
      .deleteNamespacedSecret({ name: secretName, namespace: 'cellfed-system' })
      .catch(() => undefined);
  });

  it('reads tls.crt and tls.key from the control plane and serves kubectl with them', async () => {
    const pki = controlPlanePki(env);
    await controlPlane.core.createNamespacedSecret({
      namespace: 'cellfed-system',
      body: {
        metadata: { name: secretName },
        type: 'kubernetes.io/tls',
        data: {
          'tls.crt': readFileSync(join(pki, 'apiserver.crt')).toString('base64'),
          'tls.key': readFileSync(join(pki, 'apiserver.key')).toString('base64'),
        },
      },
    });
    router = await startRouter(env, { tlsSecret: `cellfed-system/${secretName}` });
    const kubeconfig = routerKubeconfig(env, router, join(env.dir, `${secretName}-${Date.now()}.kubeconfig`));
    // kubectl verifies the served certificate against the control plane's CA.
    const namespaces = await kubectl(kubeconfig, ['get', 'namespace', 'cellfed-system', '-o', 'name']);
    expect(namespaces).toEqual({ code: 0, out: 'namespace/cellfed-system\n' });
  });
});
