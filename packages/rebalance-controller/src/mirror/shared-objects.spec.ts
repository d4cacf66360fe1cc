import { MIRROR_HASH_ANNOTATION, MIRRORED_LABEL } from '@cellfed/api';
import { ApiError } from '@cellfed/controller-kit';
import { SECRETS, type KubeObject } from '@cellfed/federation';

import { MIRRORED_VALUE } from '../mirror-marks.ts';
import { SERVICE_ACCOUNTS, mirrorSharedObjects, mirroredCopy, mirroredResources } from './shared-objects.ts';

const CLUSTER_ROLES = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
const ROLE_BINDINGS = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings' };

const clusterRole = (name: string, verbs: string[]): KubeObject => ({
  metadata: { name, uid: `uid-${name}`, resourceVersion: '7', labels: { team: 'a' } },
  rules: [{ apiGroups: [''], resources: ['pods'], verbs }],
});

/**
 * A client answering lists from `lists` by path (a 404 for the `unserved` ones) and recording every other
 * request.
 */
function fakeClient(lists: Record<string, { kind?: string; items: KubeObject[] }>, unserved: string[] = []) {
  const requests: { method: string; path: string; body?: unknown }[] = [];
  return {
    requests,
    request: async <T>(method: string, path: string, options: { body?: unknown } = {}): Promise<T> => {
      await Promise.resolve();
      if (unserved.includes(path))
        throw new ApiError(
          404,
          { reason: 'NotFound', message: 'the server could not find the requested resource' },
          `${method} ${path}`,
        );
      if (method === 'GET') return { metadata: {}, ...(lists[path] ?? { items: [] }) } as T;
      requests.push({ method, path, body: options.body });
      return {} as T;
    },
  };
}

describe('mirroredCopy', () => {
  it('keeps the content, drops what the apiserver keeps, and marks and hashes it', () => {
    const copy = mirroredCopy({
      ...clusterRole('reader', ['get']),
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
    });
    expect(copy.metadata).toEqual({
      name: 'reader',
      labels: { team: 'a', [MIRRORED_LABEL]: MIRRORED_VALUE },
      annotations: { [MIRROR_HASH_ANNOTATION]: expect.stringMatching(/^[0-9a-f]{16}$/) },
    });
    expect((copy as { rules?: unknown }).rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
    ]);
  });

  it('hashes content only: a new resourceVersion keeps the hash, a changed rule does not', () => {
    const hash = (object: KubeObject) => mirroredCopy(object).metadata.annotations?.[MIRROR_HASH_ANNOTATION];
    const base = clusterRole('reader', ['get']);
    expect(hash({ ...base, metadata: { ...base.metadata, resourceVersion: '8' } })).toBe(hash(base));
    expect(hash(clusterRole('reader', ['get', 'list']))).not.toBe(hash(base));
  });

  it('leaves out a user’s cellfed.io marks: on a copy, those are cellfed’s to set', () => {
    const base = clusterRole('reader', ['get']);
    const copy = mirroredCopy({
      ...base,
      metadata: {
        ...base.metadata,
        labels: { ...base.metadata.labels, 'cellfed.io/rebalance-status': 'migrating' },
        annotations: { 'cellfed.io/uid': 'spoofed', note: 'kept' },
      },
    });
    expect(copy.metadata.labels).toEqual({ team: 'a', [MIRRORED_LABEL]: MIRRORED_VALUE });
    expect(copy.metadata.annotations).toEqual({ note: 'kept', [MIRROR_HASH_ANNOTATION]: expect.any(String) });
  });
});

describe('mirroredCopy of admission objects', () => {
  const condition = {
    name: 'cellfed.io/not-cellfed',
    expression:
      '!(request.userInfo.username in ["system:serviceaccount:cellfed-system:cellfed", "system:serviceaccount:cellfed-system:cellfed-router"])',
  };
  const controller = [
    'system:serviceaccount:cellfed-system:cellfed',
    'system:serviceaccount:cellfed-system:cellfed-router',
  ];

  it('exempts cellfed’s components’ own writes in each policy and each webhook, beside their own conditions', () => {
    const own = { name: 'only-prod', expression: 'true' };
    const policy = mirroredCopy(
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'small' },
        spec: { matchConditions: [own], validations: [{ expression: 'true' }] },
      } as KubeObject,
      controller,
    ) as KubeObject & { spec: { matchConditions: unknown[] } };
    expect(policy.spec.matchConditions).toEqual([own, condition]);
    const webhooks = mirroredCopy(
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'hooks' },
        webhooks: [{ name: 'a.example.com' }, { name: 'b.example.com', matchConditions: [own] }],
      } as KubeObject,
      controller,
    ) as KubeObject & { webhooks: { matchConditions: unknown[] }[] };
    expect(webhooks.webhooks.map((hook) => hook.matchConditions)).toEqual([[condition], [own, condition]]);
  });

  it('leaves other kinds as they are', () => {
    const role = mirroredCopy(
      { ...clusterRole('reader', ['get']), apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' },
      controller,
    );
    expect(JSON.stringify(role)).not.toContain('not-cellfed');
  });
});

describe('mirrorSharedObjects', () => {
  it('applies what the cell lacks or holds changed, deletes what the control plane lost, skips the rest', async () => {
    const unchanged = clusterRole('same', ['get']);
    const bootstrapped = clusterRole('admin', ['*']);
    bootstrapped.metadata.labels = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
    // cellfed's own, from its chart: each cell has the cellfed-cell chart's under the same name.
    const cellfedOwn = clusterRole('cellfed-rebalance-controller', ['*']);
    cellfedOwn.metadata.labels = { 'app.kubernetes.io/part-of': 'cellfed' };
    const controlPlane = fakeClient({
      '/apis/rbac.authorization.k8s.io/v1/clusterroles': {
        kind: 'ClusterRoleList',
        // The apiserver's own roles are each cell's own: never mirrored.
        items: [
          unchanged,
          clusterRole('new', ['get']),
          clusterRole('changed', ['list']),
          clusterRole('system:basic-user', ['create']),
          bootstrapped,
          cellfedOwn,
        ],
      },
    });
    // What an earlier pass applied (list items lack apiVersion and kind; the mirror adds them).
    const inCell = (object: KubeObject) => ({
      metadata: mirroredCopy({ ...object, apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' })
        .metadata,
    });
    const cell = fakeClient({
      '/apis/rbac.authorization.k8s.io/v1/clusterroles': {
        items: [
          inCell(unchanged),
          inCell(clusterRole('changed', ['get'])),
          inCell(clusterRole('gone', ['get'])),
        ],
      },
    });
    const writes = await mirrorSharedObjects(
      controlPlane,
      cell,
      [CLUSTER_ROLES],
      new AbortController().signal,
      4,
    );
    expect(writes).toBe(3);
    expect(cell.requests.map(({ method, path }) => `${method} ${path}`).sort()).toEqual([
      'DELETE /apis/rbac.authorization.k8s.io/v1/clusterroles/gone',
      'PATCH /apis/rbac.authorization.k8s.io/v1/clusterroles/changed',
      'PATCH /apis/rbac.authorization.k8s.io/v1/clusterroles/new',
    ]);
    const applied = JSON.parse(
      String(cell.requests.find((one) => one.path.endsWith('/new'))!.body),
    ) as KubeObject;
    expect([applied.apiVersion, applied.kind]).toEqual(['rbac.authorization.k8s.io/v1', 'ClusterRole']);
  });

  it('takes an empty metadata list (`items: null`) for no objects', async () => {
    const controlPlane = fakeClient({
      '/apis/rbac.authorization.k8s.io/v1/clusterroles': {
        kind: 'ClusterRoleList',
        items: [clusterRole('new', ['get'])],
      },
    });
    const cell = fakeClient({
      '/apis/rbac.authorization.k8s.io/v1/clusterroles': { items: null as unknown as KubeObject[] },
    });
    await mirrorSharedObjects(controlPlane, cell, [CLUSTER_ROLES], new AbortController().signal, 4);
    expect(cell.requests.map(({ method, path }) => `${method} ${path}`)).toEqual([
      'PATCH /apis/rbac.authorization.k8s.io/v1/clusterroles/new',
    ]);
  });

  it('puts namespaced objects in their namespace and leaves the cell’s system namespaces alone', async () => {
    const binding = (namespace: string): KubeObject => ({
      metadata: { name: 'readers', namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'reader' },
    });
    const controlPlane = fakeClient({
      '/apis/rbac.authorization.k8s.io/v1/rolebindings': {
        kind: 'RoleBindingList',
        items: [binding('shop'), binding('kube-system')],
      },
    });
    const cell = fakeClient({});
    await mirrorSharedObjects(controlPlane, cell, [ROLE_BINDINGS], new AbortController().signal, 4);
    expect(cell.requests.map(({ method, path }) => `${method} ${path}`)).toEqual([
      'PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/shop/rolebindings/readers',
    ]);
  });
});

describe('mirrorSharedObjects and what each apiserver has of its own', () => {
  it('leaves the built-in PriorityClasses and the write fence alone, and mirrors the rest', async () => {
    const priorityClasses = { group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses' };
    const named = (name: string): KubeObject => ({ metadata: { name }, value: 1 }) as KubeObject;
    const controlPlane = fakeClient({
      '/apis/scheduling.k8s.io/v1/priorityclasses': {
        items: [named('system-node-critical'), named('system-cluster-critical'), named('gold')],
      },
      '/apis/rbac.authorization.k8s.io/v1/clusterroles': {
        items: [clusterRole('system-admin', ['get']), clusterRole('cellfed-rebalance-fence', ['get'])],
      },
    });
    const cell = fakeClient({});
    await mirrorSharedObjects(
      controlPlane,
      cell,
      [priorityClasses, CLUSTER_ROLES],
      new AbortController().signal,
      4,
    );
    expect(cell.requests.map(({ path }) => path)).toEqual([
      '/apis/scheduling.k8s.io/v1/priorityclasses/gold',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/system-admin',
    ]);
  });
});

describe('mirrorSharedObjects with a resource an apiserver does not serve', () => {
  const POLICIES = {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    resource: 'mutatingadmissionpolicies',
  };
  const path = '/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies';
  const mirror = (controlPlane: ReturnType<typeof fakeClient>, cell: ReturnType<typeof fakeClient>) =>
    mirrorSharedObjects(controlPlane, cell, [POLICIES, CLUSTER_ROLES], new AbortController().signal, 4);
  const roles = {
    '/apis/rbac.authorization.k8s.io/v1/clusterroles': { items: [clusterRole('new', ['get'])] },
  };

  it('skips it where the control plane does not serve it, and mirrors the rest', async () => {
    const cell = fakeClient({});
    await expect(mirror(fakeClient(roles, [path]), cell)).resolves.toBe(1);
    expect(cell.requests.map(({ path: written }) => written)).toEqual([
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/new',
    ]);
  });

  it('skips it where the control plane has none of it', async () => {
    await expect(mirror(fakeClient(roles), fakeClient({}, [path]))).resolves.toBe(1);
  });

  it('fails the pass, naming the resource, where the control plane has objects of it', async () => {
    const controlPlane = fakeClient({ ...roles, [path]: { items: [clusterRole('policy', [])] } });
    await expect(mirror(controlPlane, fakeClient({}, [path]))).rejects.toMatchObject({
      code: 'CELLFED_REBALANCE_SHARED_RESOURCE_NOT_SERVED',
      message: expect.stringContaining(
        'does not serve mutatingadmissionpolicies.admissionregistration.k8s.io v1',
      ),
    });
  });
});

describe('mirroredResources', () => {
  const roles = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles' };
  const deployments = { group: 'apps', version: 'v1', resource: 'deployments' };

  it('adds ServiceAccounts to the shared resources', () => {
    expect(mirroredResources({ sharedResources: [roles], cellularResources: [deployments] })).toEqual([
      roles,
      SERVICE_ACCOUNTS,
    ]);
  });

  it('does not add them when the CellSet lists them, as shared or as cellular', () => {
    expect(mirroredResources({ sharedResources: [SERVICE_ACCOUNTS], cellularResources: [] })).toEqual([
      SERVICE_ACCOUNTS,
    ]);
    expect(
      mirroredResources({
        sharedResources: [roles],
        cellularResources: [{ ...SERVICE_ACCOUNTS, version: 'v1' }],
      }),
    ).toEqual([roles]);
  });
});

describe('mirroring Secrets (when the CellSet shares them)', () => {
  it('reads the control plane without the Secrets no pod mounts, and applies the others', async () => {
    const reads: { path: string; query?: Record<string, unknown> }[] = [];
    const writes: string[] = [];
    const client = (items: KubeObject[]) => ({
      request: async <T>(method: string, path: string, options: { query?: Record<string, unknown> } = {}) => {
        await Promise.resolve();
        if (method === 'GET') {
          reads.push({ path, ...(options.query ? { query: options.query } : {}) });
          return { metadata: {}, kind: 'SecretList', items } as T;
        }
        writes.push(`${method} ${path}`);
        return {} as T;
      },
    });
    const secret = {
      metadata: { name: 'db', namespace: 'shop', uid: 'u' },
      type: 'Opaque',
      data: { a: 'YQ==' },
    };
    await mirrorSharedObjects(client([secret]), client([]), [SECRETS], new AbortController().signal, 2);
    expect(reads[0]).toEqual({
      path: '/api/v1/secrets',
      query: {
        fieldSelector:
          'type!=kubernetes.io/service-account-token,type!=bootstrap.kubernetes.io/token,type!=helm.sh/release.v1',
      },
    });
    expect(writes).toEqual(['PATCH /api/v1/namespaces/shop/secrets/db']);
  });

  it('are not mirrored unless the CellSet lists them', () => {
    expect(mirroredResources({ sharedResources: [], cellularResources: [] })).not.toContainEqual(SECRETS);
    expect(mirroredResources({ sharedResources: [SECRETS], cellularResources: [] })).toContainEqual(SECRETS);
  });
});
