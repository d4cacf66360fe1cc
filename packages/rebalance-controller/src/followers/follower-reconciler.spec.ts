import { FOLLOWER_LABEL, parseCellSetSpec } from '@cellfed/api';
import { ApiError, type CopiesView } from '@cellfed/controller-kit';
import { FakeCell, fakeCopies, memoryLogger } from '@cellfed/controller-kit/testing';
import { MIGRATED, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import { Registry } from 'prom-client';
import { type KubeObject, FederationErrorCode } from '@cellfed/federation';

import { AdmissionParams } from './admission-params.ts';
import { FollowerReconciler, formatFollowerKey, parseFollowerKey } from './follower-reconciler.ts';
import { PlanHolder } from '../rebalance-plan.ts';
import { RebalanceMetrics } from '../rebalance-metrics.ts';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };
const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
const RESYNC = 60_000;
const cmPath = (name: string) => `/api/v1/namespaces/shop/configmaps/${name}`;
const secretPath = (name: string) => `/api/v1/namespaces/shop/secrets/${name}`;
const deploymentPath = (name: string) => `/apis/apps/v1/namespaces/shop/deployments/${name}`;

/** The cells' caches of ConfigMaps and Deployments, as the controller's CellObjects gives them. */
function cachedCopies(cells: FakeCell[]): CopiesView {
  const configMaps = fakeCopies(cells, CONFIGMAPS);
  const deployments = fakeCopies(cells, DEPLOYMENTS);
  return {
    copiesOf: (ref) => (ref.resource.resource === 'configmaps' ? configMaps : deployments).copiesOf(ref),
    eachCopy: (visit) => {
      configMaps.eachCopy(visit);
      deployments.eachCopy(visit);
    },
    synced: () => true,
  };
}

function setup(
  options: { shared?: boolean; down?: boolean; params?: () => AdmissionParams | undefined } = {},
) {
  const spec = parseCellSetSpec({
    cellularResources: [DEPLOYMENTS, CONFIGMAPS],
    sharedResources: options.shared ? [SECRETS] : [],
    cells: ['a', 'b', 'c'].map((id) => ({
      id,
      state: options.down && id === 'a' ? ('Down' as const) : ('Normal' as const),
      kubeconfigSecretRef: { name: id },
    })),
  });
  const cells = { a: new FakeCell('a'), b: new FakeCell('b'), c: new FakeCell('c') };
  const controlPlane = new FakeCell('control-plane');
  const plans = new PlanHolder();
  plans.load(spec, 1);
  const metrics = new RebalanceMetrics(new Registry());
  const claimsNamed: string[] = [];
  const reconciler = new FollowerReconciler({
    plans,
    copies: cachedCopies(Object.values(cells)),
    cell: (id) => (id in cells ? { id, client: cells[id as keyof typeof cells] } : undefined),
    controlPlane,
    metrics,
    resyncMs: RESYNC,
    ...(options.params ? { params: options.params } : {}),
    onClaimsNamed: (namespace, names) => claimsNamed.push(`${namespace}: ${names.join(',')}`),
  });
  const deployment = (name: string, podSpec: unknown) =>
    cells.a.put(deploymentPath(name), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: 'shop' },
      spec: { template: { spec: podSpec } },
    } as KubeObject);
  const configMap = (cell: FakeCell, name: string, data: Record<string, string>, extra: object = {}) =>
    cell.put(cmPath(name), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'shop', labels: { app: 'web' } },
      data,
      ...extra,
    } as KubeObject);
  const secret = (name: string, data: Record<string, string>) =>
    controlPlane.put(secretPath(name), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: 'shop' },
      type: 'Opaque',
      data,
    } as KubeObject);
  const reconcile = (key = 'a/shop') =>
    reconciler.reconcile({
      key: parseFollowerKey(key),
      lane: 'high',
      signal: new AbortController().signal,
      log: memoryLogger().logger,
    });
  const count = async (action: string) =>
    (await metrics.followers.get()).values.find((value) => value.labels['action'] === action)?.value ?? 0;
  return { cells, controlPlane, deployment, configMap, secret, reconcile, count, reconciler, claimsNamed };
}

const usesSettingsAndDb = {
  volumes: [{ name: 'settings', configMap: { name: 'settings' } }],
  containers: [{ name: 'web', envFrom: [{ secretRef: { name: 'db' } }] }],
};

describe('FollowerReconciler', () => {
  it('copies what a pod template names from another cell and from the control plane into the workload’s cell', async () => {
    const { cells, deployment, configMap, secret, reconcile, count } = setup();
    configMap(cells.b, 'settings', { mode: 'fast' });
    secret('db', { password: 'cw==' });
    deployment('web', usesSettingsAndDb);

    expect(await reconcile()).toEqual({ requeueAfterMs: RESYNC });

    expect(cells.a.get(cmPath('settings'))).toMatchObject({
      kind: 'ConfigMap',
      data: { mode: 'fast' },
      metadata: { labels: { app: 'web', [FOLLOWER_LABEL]: 'b' } },
    });
    expect(cells.a.get(secretPath('db'))).toMatchObject({
      kind: 'Secret',
      type: 'Opaque',
      data: { password: 'cw==' },
      metadata: { labels: { [FOLLOWER_LABEL]: 'control-plane' } },
    });
    expect(await count('created')).toBe(2);
  });

  it('writes nothing again while the sources stay, and reads an unchanged cell source not at all', async () => {
    const { cells, deployment, configMap, secret, reconcile } = setup();
    configMap(cells.b, 'settings', { mode: 'fast' });
    secret('db', { password: 'cw==' });
    deployment('web', usesSettingsAndDb);
    await reconcile();
    const writes = cells.a.writes.length;
    cells.b.reads.length = 0;

    await reconcile();

    expect(cells.a.writes).toHaveLength(writes);
    expect(cells.b.reads).not.toContain(cmPath('settings'));
  });

  it('reads a workload again only when its spec changed (a new generation)', async () => {
    const { cells, deployment, configMap, secret, reconcile } = setup();
    configMap(cells.b, 'settings', { mode: 'fast' });
    secret('db', { password: 'cw==' });
    deployment('web', usesSettingsAndDb);
    await reconcile();
    const reads = () => cells.a.reads.filter((path) => path === deploymentPath('web')).length;
    expect(reads()).toBe(1);

    // A status write keeps the generation: nothing is read.
    const stored = cells.a.get(deploymentPath('web'))!;
    cells.a.put(deploymentPath('web'), { ...stored, status: { replicas: 1 } } as KubeObject);
    await reconcile();
    expect(reads()).toBe(1);

    deployment('web', { containers: [{ name: 'web' }] });
    await reconcile();
    expect(reads()).toBe(2);
    expect(cells.a.get(cmPath('settings'))).toBeUndefined();
  });

  it('follows a source’s change, and deletes the copy when the source goes or no template names it', async () => {
    const { cells, controlPlane, deployment, configMap, secret, reconcile, count } = setup();
    configMap(cells.b, 'settings', { mode: 'fast' });
    secret('db', { password: 'cw==' });
    deployment('web', usesSettingsAndDb);
    await reconcile();

    configMap(cells.b, 'settings', { mode: 'safe' });
    await reconcile();
    expect(cells.a.get(cmPath('settings'))).toMatchObject({ data: { mode: 'safe' } });
    expect(await count('updated')).toBe(1);

    controlPlane.objects.delete(secretPath('db'));
    await reconcile();
    expect(cells.a.get(secretPath('db'))).toBeUndefined();

    deployment('web', { containers: [{ name: 'web' }] });
    await reconcile();
    expect(cells.a.get(cmPath('settings'))).toBeUndefined();
    expect(await count('deleted')).toBe(2);
  });

  it('replaces the copy of an immutable source that was recreated with other data', async () => {
    const { cells, deployment, configMap, reconcile } = setup();
    configMap(cells.b, 'settings', { mode: 'fast' }, { immutable: true });
    deployment('web', { volumes: [{ name: 's', configMap: { name: 'settings' } }], containers: [] });
    await reconcile();
    const first = cells.a.get(cmPath('settings'))!;

    cells.b.objects.delete(cmPath('settings'));
    configMap(cells.b, 'settings', { mode: 'safe' }, { immutable: true });
    await reconcile();

    const second = cells.a.get(cmPath('settings'))!;
    expect(second).toMatchObject({ data: { mode: 'safe' }, immutable: true });
    expect(second.metadata.uid).not.toBe(first.metadata.uid);
  });

  it('keeps in every cell the params admission bindings name, and takes them out when no binding names them', async () => {
    let params = new AdmissionParams([
      { resource: 'configmaps', name: 'limits' },
      { resource: 'configmaps', selector: { matchLabels: { tier: 'limits' } } },
      { resource: 'secrets', namespace: 'shop', name: 'token' },
      // Named in every namespace: a Secret stored in the control plane is not looked for in each one.
      { resource: 'secrets', name: 'everywhere' },
    ]);
    const { cells, controlPlane, configMap, secret, reconcile, reconciler } = setup({ params: () => params });
    configMap(cells.b, 'limits', { max: '3' });
    configMap(
      cells.c,
      'more-limits',
      { max: '5' },
      { metadata: { name: 'more-limits', namespace: 'shop', labels: { tier: 'limits' } } },
    );
    configMap(cells.b, 'unrelated', { max: '9' });
    secret('token', { value: 'dA==' });
    secret('everywhere', { value: 'ZQ==' });

    await reconcile('a/shop');
    await reconcile('b/shop');

    expect(cells.a.get(cmPath('limits'))).toMatchObject({
      data: { max: '3' },
      metadata: { labels: { [FOLLOWER_LABEL]: 'b' } },
    });
    expect(cells.a.get(cmPath('more-limits'))).toMatchObject({
      data: { max: '5' },
      metadata: { labels: { tier: 'limits', [FOLLOWER_LABEL]: 'c' } },
    });
    expect(cells.a.get(cmPath('unrelated'))).toBeUndefined();
    expect(cells.a.get(secretPath('token'))).toMatchObject({ data: { value: 'dA==' } });
    expect(cells.b.get(cmPath('limits'))?.metadata.labels?.[FOLLOWER_LABEL]).toBeUndefined(); // its home
    expect(cells.b.get(cmPath('more-limits'))).toMatchObject({
      metadata: { labels: { [FOLLOWER_LABEL]: 'c' } },
    });
    expect(cells.b.get(secretPath('token'))).toBeDefined();
    for (const cell of [cells.a, cells.b]) expect(cell.get(secretPath('everywhere'))).toBeUndefined();
    expect(controlPlane.reads).not.toContain(secretPath('everywhere'));
    // Each cell whose pass named it, its home too: a change to it queues them.
    expect(reconciler.cellsNaming({ resource: CONFIGMAPS, namespace: 'shop', name: 'limits' })).toEqual([
      'a',
      'b',
    ]);

    params = AdmissionParams.NONE;
    await reconcile('a/shop');
    for (const path of [cmPath('limits'), cmPath('more-limits'), secretPath('token')])
      expect(cells.a.get(path)).toBeUndefined();
  });

  it('waits, touching no follower, while the admission policies and bindings are not listed', async () => {
    let params: AdmissionParams | undefined = new AdmissionParams([
      { resource: 'configmaps', name: 'limits' },
    ]);
    const { cells, configMap, reconcile } = setup({ params: () => params });
    configMap(cells.b, 'limits', { max: '3' });
    await reconcile('a/shop');
    expect(cells.a.get(cmPath('limits'))).toBeDefined();

    // A restart: the bindings are not listed yet, so nothing says the param is still wanted.
    params = undefined;
    const writes = cells.a.writes.length;
    expect(await reconcile('a/shop')).toEqual({ requeueAfterMs: 1000 });
    expect(cells.a.writes).toHaveLength(writes);
    expect(cells.a.get(cmPath('limits'))).toBeDefined();
  });

  it('never copies what is in the cell already, what every cell has, or a shared resource the mirror keeps', async () => {
    const { cells, controlPlane, deployment, configMap, secret, reconcile } = setup({ shared: true });
    configMap(cells.a, 'local', { here: 'yes' });
    configMap(cells.b, 'kube-root-ca.crt', { 'ca.crt': 'cell b’s own' });
    secret('db', { password: 'cw==' });
    deployment('web', {
      volumes: [
        { name: 'l', configMap: { name: 'local' } },
        { name: 'ca', configMap: { name: 'kube-root-ca.crt' } },
        { name: 'missing', configMap: { name: 'nowhere' } },
      ],
      containers: [{ name: 'web', envFrom: [{ secretRef: { name: 'db' } }] }],
    });

    await reconcile();

    expect(cells.a.writes).toEqual([]);
    expect(controlPlane.reads).not.toContain(secretPath('db'));
  });

  it('takes from the object’s copy, not from the leftover of its move, and drops cellfed’s marks', async () => {
    const { cells, deployment, configMap, reconcile } = setup();
    configMap(cells.b, 'settings', { mode: 'before the move' });
    cells.b.objects.get(cmPath('settings'))!.metadata.labels![REBALANCE_STATUS_LABEL] = MIGRATED;
    configMap(cells.c, 'settings', { mode: 'after the move' });
    deployment('web', { volumes: [{ name: 's', configMap: { name: 'settings' } }], containers: [] });

    await reconcile();

    const copy = cells.a.get(cmPath('settings'))!;
    expect(copy).toMatchObject({
      data: { mode: 'after the move' },
      metadata: { labels: { [FOLLOWER_LABEL]: 'c' } },
    });
    expect(copy.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBeUndefined();
  });

  it('leaves an object of the same name that is not a follower alone', async () => {
    const { cells, deployment, secret, reconcile } = setup();
    secret('db', { password: 'cw==' });
    cells.a.put(secretPath('db'), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'shop' },
      data: { password: 'b3du' },
    } as KubeObject);
    deployment('web', usesSettingsAndDb);

    await expect(reconcile()).resolves.toEqual({ requeueAfterMs: RESYNC });

    expect(cells.a.get(secretPath('db'))).toMatchObject({ data: { password: 'b3du' } });
  });

  it('fails, to be retried, when the control plane refuses to give a Secret', async () => {
    const { controlPlane, deployment, reconcile } = setup();
    const refuse = controlPlane.request.bind(controlPlane);
    controlPlane.request = (<T>(method: string, path: string, options?: object) =>
      path === secretPath('db')
        ? Promise.reject(new ApiError(403, { code: 403, reason: 'Forbidden' }, `GET ${path}`))
        : refuse<T>(method, path, options)) as typeof controlPlane.request;
    deployment('web', usesSettingsAndDb);

    await expect(reconcile()).rejects.toThrow(/403 Forbidden/);
  });

  it('remembers which cells name a source, also one that does not exist yet, so only its change queues them', async () => {
    const { cells, deployment, configMap, reconcile, reconciler } = setup();
    const settings = { resource: CONFIGMAPS, namespace: 'shop', name: 'settings' };
    deployment('web', usesSettingsAndDb);
    await reconcile();
    expect(reconciler.cellsNaming(settings)).toEqual(['a']);
    expect(reconciler.cellsNaming({ ...settings, namespace: 'other' })).toEqual([]);
    expect(reconciler.cellsNaming({ ...settings, name: 'unnamed' })).toEqual([]);

    configMap(cells.b, 'settings', { mode: 'late' });
    await reconcile();
    expect(cells.a.get(cmPath('settings'))).toMatchObject({ data: { mode: 'late' } });

    deployment('web', { containers: [{ name: 'web' }] });
    await reconcile();
    expect(reconciler.cellsNaming(settings)).toEqual([]);
  });

  it('does nothing in a cell that is Down', async () => {
    const { cells, deployment, configMap, reconcile } = setup({ down: true });
    configMap(cells.b, 'settings', { mode: 'fast' });
    deployment('web', usesSettingsAndDb);

    expect(await reconcile()).toEqual({});
    expect(cells.a.get(cmPath('settings'))).toBeUndefined();
  });
});

describe('follower keys', () => {
  it('name a cell and a namespace, and read back', () => {
    expect(parseFollowerKey(formatFollowerKey({ cell: 'a', namespace: 'shop' }))).toEqual({
      cell: 'a',
      namespace: 'shop',
    });
  });

  it.each(['shop', '/shop', 'a/'])('refuse %j with a stable code', (key) => {
    expect(() => parseFollowerKey(key)).toThrow(
      expect.objectContaining({ code: FederationErrorCode.InvalidKey }),
    );
  });
});

describe('FollowerReconciler: claims', () => {
  it('tells which claims a cell’s pod templates begin and stop mounting, and names the cell for them, copying none', async () => {
    const { cells, deployment, reconcile, reconciler, claimsNamed } = setup();
    const mounting = (claims: string[]) => ({
      containers: [{ name: 'db' }],
      volumes: claims.map((claimName) => ({ name: claimName, persistentVolumeClaim: { claimName } })),
    });
    deployment('db', mounting(['data', 'logs']));
    await reconcile();
    expect(claimsNamed).toEqual(['shop: data,logs']);
    const claim = {
      resource: { group: '', version: 'v1', resource: 'persistentvolumeclaims' },
      namespace: 'shop',
    };
    expect(reconciler.cellsNaming({ ...claim, name: 'data' })).toEqual(['a']);
    expect([...cells.a.objects.keys()].filter((path) => path.includes('persistentvolumeclaims'))).toEqual([]);

    await reconcile(); // nothing changed: nothing told
    expect(claimsNamed).toHaveLength(1);
    deployment('db', mounting(['data']));
    await reconcile();
    expect(claimsNamed).toEqual(['shop: data,logs', 'shop: logs']);
    expect(reconciler.cellsNaming({ ...claim, name: 'logs' })).toEqual([]);
  });

  it('names no claim for a move’s fenced or old copy, whose pods are going', async () => {
    const { cells, reconcile, reconciler, claimsNamed } = setup();
    cells.a.put(deploymentPath('db'), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'db', namespace: 'shop', labels: { [REBALANCE_STATUS_LABEL]: MIGRATED } },
      spec: {
        template: { spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] } },
      },
    } as KubeObject);
    await reconcile();
    expect(claimsNamed).toEqual([]);
    const claim = {
      resource: { group: '', version: 'v1', resource: 'persistentvolumeclaims' },
      namespace: 'shop',
    };
    expect(reconciler.cellsNaming({ ...claim, name: 'data' })).toEqual([]);
  });
});
