import { parseCellSet, parseCellSetSpec, type CellSetSpecInput } from '@cellfed/api';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { RoutingTable } from '@cellfed/hashing';
import { KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { Agent, request } from 'undici';

import { cellSecretName } from '@cellfed/cells/control-plane/cell-secrets.ts';
import {
  clientsFor,
  createCellSet,
  deleteCellSet,
  eventually,
  grantRole,
  newServiceAccountToken,
  readCellSet,
} from '../helpers/clients.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import {
  adminSocket,
  controlPlanePki,
  kubectl,
  routerKubeconfig,
  startRouter,
  stopRouter,
  type RouterProcess,
} from '../helpers/router-process.ts';

/** A length-delimited protobuf field (the test's own encoder, independent of the router's). */
function pbField(number: number, value: Buffer | string): Buffer {
  const payload = typeof value === 'string' ? Buffer.from(value) : value;
  const varint = (n: number) => {
    const bytes: number[] = [];
    while (n >= 128) {
      bytes.push((n % 128) + 128);
      n = Math.floor(n / 128);
    }
    bytes.push(n);
    return Buffer.from(bytes);
  };
  return Buffer.concat([varint(number * 8 + 2), varint(payload.length), payload]);
}

/** A ConfigMap as client-go encodes it for `application/vnd.kubernetes.protobuf`. */
function protobufConfigMap(metadata: { name?: string; generateName?: string }, data: Record<string, string>) {
  const objectMeta = Buffer.concat([
    pbField(1, metadata.name ?? ''),
    ...(metadata.generateName ? [pbField(2, metadata.generateName)] : []),
  ]);
  const entries = Object.entries(data).map(([key, value]) =>
    pbField(2, Buffer.concat([pbField(1, key), pbField(2, value)])),
  );
  const raw = Buffer.concat([pbField(1, objectMeta), ...entries]);
  return Buffer.concat([
    Buffer.from('k8s\0', 'binary'),
    pbField(1, Buffer.concat([pbField(1, 'v1'), pbField(2, 'ConfigMap')])),
    pbField(2, raw),
    pbField(3, ''),
    pbField(4, ''),
  ]);
}

describeE2e('cell router: kubectl, client-node and raw clients work through it unchanged', () => {
  const env = e2eEnv();
  const pki = controlPlanePki(env);
  const controlPlane = clientsFor(env.controlPlane.kubeconfig);
  const cells = Object.fromEntries(env.cells.map((cell) => [cell.id, clientsFor(cell.kubeconfig)]));
  const namespace = `clients-${Date.now()}`;
  let router: RouterProcess;
  let kubeconfig = '';
  let admin: Agent;
  let anonymousTls: Agent;

  /** The cell the ring names for namespace/name under CellSet `cellSet`. */
  async function cellOf(name: string, ns = namespace, cellSet = env.cellSet): Promise<string> {
    const object = await readCellSet(env.controlPlane.kubeconfig, cellSet);
    const table = RoutingTable.fromCellSet(parseCellSet(object).spec);
    return table.route(table.keyOf({ namespace: ns, name })).oldCell;
  }

  /** The cells that hold `kind/name` in the test namespace, read directly from each cell. */
  async function holders(read: (clients: ReturnType<typeof clientsFor>) => Promise<unknown>) {
    const found: string[] = [];
    for (const [id, clients] of Object.entries(cells)) {
      if (
        await read(clients).then(
          () => true,
          () => false,
        )
      )
        found.push(id);
    }
    return found;
  }

  const deploymentIn = (name: string) => (clients: ReturnType<typeof clientsFor>) =>
    clients.apps.readNamespacedDeployment({ name, namespace });

  /** A raw request to the router as the admin (client certificate) or with other credentials. */
  async function raw(
    method: string,
    path: string,
    options: {
      body?: string | Buffer;
      contentType?: string;
      headers?: Record<string, string>;
      agent?: Agent;
    } = {},
  ) {
    const response = await request(`${router.url}${path}`, {
      method: method as 'GET',
      dispatcher: options.agent ?? admin,
      headers: {
        ...(options.contentType ? { 'content-type': options.contentType } : {}),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { body: options.body }),
    });
    const text = await response.body.text();
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    return { code: response.statusCode, body, text };
  }

  beforeAll(async () => {
    router = await startRouter(env);
    kubeconfig = routerKubeconfig(env, router, join(env.dir, `router-clients.kubeconfig`));
    admin = new Agent({
      connect: {
        ca: readFileSync(join(pki, 'ca.crt')),
        cert: readFileSync(join(pki, 'admin.crt')),
        key: readFileSync(join(pki, 'admin.key')),
      },
    });
    anonymousTls = new Agent({ connect: { ca: readFileSync(join(pki, 'ca.crt')) } });
    // Only in the control plane, through the router: the router creates it in a cell on the first write.
    const created = await kubectl(kubeconfig, ['create', 'namespace', namespace]);
    expect(created).toMatchObject({ code: 0 });
  });

  afterAll(async () => {
    await stopRouter(router);
    await admin?.close();
    await anonymousTls?.close();
  });

  it('kubectl create -f, apply --server-side, edit, scale, status and delete land in the ring cell only', async () => {
    const name = 'shop';
    const expected = await cellOf(name);
    const manifest = (replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
    spec:
      containers: [{ name: web, image: nginx }]
`;
    const file = join(env.dir, `${namespace}-deployment.yaml`);
    writeFileSync(file, manifest(1));
    // The namespace exists only in the control plane: the router creates it in the cell first.
    expect(await kubectl(kubeconfig, ['create', '-f', file])).toMatchObject({ code: 0 });
    expect(await holders(deploymentIn(name))).toEqual([expected]);
    const inCell = () => cells[expected]!.apps.readNamespacedDeployment({ name, namespace });

    writeFileSync(file, manifest(2));
    const applied = await kubectl(kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', file]);
    expect(applied).toMatchObject({ code: 0 });
    expect((await inCell()).spec?.replicas).toBe(2);

    // kubectl edit: GET, then the editor, then a patch.
    const edited = await kubectl(kubeconfig, ['-n', namespace, 'edit', 'deployment', name], {
      env: { KUBE_EDITOR: `sed -i -e 's/^  replicas: 2$/  replicas: 3/'` },
    });
    expect(edited).toMatchObject({ code: 0 });
    expect((await inCell()).spec?.replicas).toBe(3);

    expect(
      await kubectl(kubeconfig, ['-n', namespace, 'scale', 'deployment', name, '--replicas=4']),
    ).toMatchObject({ code: 0 });
    expect((await inCell()).spec?.replicas).toBe(4);

    // A condition of our own in status (a merge patch of the status subresource); the deployment controller
    // in the cell keeps conditions it does not own.
    const status = await kubectl(kubeconfig, [
      '-n',
      namespace,
      'patch',
      'deployment',
      name,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          conditions: [
            { type: 'CellfedTest', status: 'True', reason: 'ThroughRouter', message: 'status subresource' },
          ],
        },
      }),
    ]);
    expect(status).toMatchObject({ code: 0 });
    await eventually('the status condition in the cell', async () =>
      (await inCell()).status?.conditions?.some((c) => c.type === 'CellfedTest') ? true : undefined,
    );

    // kubectl speaks HTTP/2 when the router offers it (ALPN), as it does with kube-apiserver.
    expect(
      router.lines.some((line) => line.msg === 'request' && line.http === '2.0' && line.cell === expected),
    ).toBe(true);
    const got = await kubectl(kubeconfig, [
      '-n',
      namespace,
      'get',
      'deployment',
      name,
      '-o',
      'jsonpath={.spec.replicas}',
    ]);
    expect(got).toEqual({ code: 0, out: '4' });

    expect(
      await kubectl(kubeconfig, ['-n', namespace, 'delete', 'deployment', name, '--wait=false']),
    ).toMatchObject({
      code: 0,
    });
    await eventually('the Deployment to be gone from every cell', async () =>
      (await holders(deploymentIn(name))).length === 0 ? true : undefined,
    );
  });

  it('kubectl auth whoami through the router shows what one apiserver shows', async () => {
    const userInfo = async (config: string) => {
      const result = await kubectl(config, ['auth', 'whoami', '-o', 'json']);
      expect(result).toMatchObject({ code: 0 });
      return (JSON.parse(result.out) as { status: { userInfo: unknown } }).status.userInfo;
    };
    const direct = await userInfo(env.controlPlane.kubeconfig);
    expect(direct).toHaveProperty(['extra', 'authentication.kubernetes.io/credential-id']);
    expect(await userInfo(kubeconfig)).toEqual(direct);
  });

  it('a create over 3 MiB is refused to kubectl (HTTP/2) as one apiserver refuses it, not with a stream reset', async () => {
    const file = join(env.dir, 'router-clients-big.txt');
    writeFileSync(file, 'a'.repeat(3_200_000));
    const create = (config: string) =>
      kubectl(config, ['-n', namespace, 'create', 'configmap', 'too-big', `--from-file=${file}`]);
    const direct = await create(env.controlPlane.kubeconfig);
    expect(direct.out).toContain('Request entity too large: limit is 3145728');
    for (let i = 0; i < 3; i++) expect(await create(kubeconfig)).toEqual(direct);
  });

  it('kubectl create ns then create deploy works in a namespace no cell has yet, every time', async () => {
    for (let i = 0; i < 3; i++) {
      const ns = `${namespace}-fresh-${i}`;
      expect(await kubectl(kubeconfig, ['create', 'namespace', ns])).toMatchObject({ code: 0 });
      const created = await kubectl(kubeconfig, ['-n', ns, 'create', 'deployment', 'app', '--image=nginx']);
      expect(created).toMatchObject({ code: 0 });
      const expected = await cellOf('app', ns);
      await cells[expected]!.apps.readNamespacedDeployment({ name: 'app', namespace: ns });
    }
  });

  it('creates from a protobuf body, named or generateName, and the cell stores what was sent', async () => {
    const contentType = 'application/vnd.kubernetes.protobuf';
    const named = await raw('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
      body: protobufConfigMap({ name: 'from-protobuf' }, { encoding: 'protobuf' }),
      contentType,
      headers: { accept: 'application/json' },
    });
    expect(named).toMatchObject({ code: 201, body: { metadata: { name: 'from-protobuf' } } });
    const stored = await cells[await cellOf('from-protobuf')]!.core.readNamespacedConfigMap({
      name: 'from-protobuf',
      namespace,
    });
    expect(stored.data).toEqual({ encoding: 'protobuf' });

    const generated = await raw('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
      body: protobufConfigMap({ generateName: 'pb-' }, { generated: 'yes' }),
      contentType,
      headers: { accept: 'application/json' },
    });
    expect(generated.code).toBe(201);
    const name = (generated.body?.metadata as { name: string }).name;
    expect(name).toMatch(/^pb-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const inCell = await cells[await cellOf(name)]!.core.readNamespacedConfigMap({ name, namespace });
    expect(inCell.data).toEqual({ generated: 'yes' });
  });

  it('deletes a collection in every cell through client-node and answers with every deleted item', async () => {
    const names = Array.from({ length: 9 }, (_, i) => `batch-${i}`);
    const config = new KubeConfig();
    config.loadFromFile(kubeconfig);
    const { CoreV1Api } = await import('@kubernetes/client-node');
    const core = config.makeApiClient(CoreV1Api);
    for (const name of names) {
      await core.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name, labels: { batch: 'b1' } } },
      });
    }
    const spread = new Set(await Promise.all(names.map((name) => cellOf(name))));
    expect(spread.size).toBeGreaterThan(1);
    await core.deleteCollectionNamespacedConfigMap({ namespace, labelSelector: 'batch=b1' });
    for (const clients of Object.values(cells)) {
      const left = await clients.core.listNamespacedConfigMap({ namespace, labelSelector: 'batch=b1' });
      expect(left.items).toEqual([]);
    }
  });

  /** A new ServiceAccount `name` in the control plane, and a token for it (an hour). */
  const serviceAccountToken = (name: string) =>
    newServiceAccountToken(env.controlPlane.kubeconfig, namespace, name);

  it('lets each cell RBAC decide for a token user, and refuses a spoofed Impersonate-User with 403', async () => {
    const sa = 'reader';
    const token = await serviceAccountToken(sa);
    const user = `system:serviceaccount:${namespace}:${sa}`;
    const name = 'guarded';
    await raw('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
      body: JSON.stringify({ metadata: { name }, data: { secret: 'no' } }),
      contentType: 'application/json',
    });
    const asReader = { authorization: `Bearer ${token}` };
    const path = `/api/v1/namespaces/${namespace}/configmaps/${name}`;

    // Authenticated by TokenReview, forbidden by the cell's RBAC.
    const denied = await raw('GET', path, { headers: asReader, agent: anonymousTls });
    expect(denied).toMatchObject({ code: 403, body: { kind: 'Status', reason: 'Forbidden' } });
    expect(String(denied.body?.message)).toContain(user);

    // The reader claims to be someone else: the control plane's SubjectAccessReview says no.
    const spoofed = await raw('GET', path, {
      headers: { ...asReader, 'impersonate-user': 'kubernetes-admin', 'impersonate-group': 'system:masters' },
      agent: anonymousTls,
    });
    expect(spoofed).toMatchObject({ code: 403, body: { kind: 'Status', reason: 'Forbidden' } });
    await eventually('the refusal in the access log', async () =>
      router.lines.some((line) => line.msg === 'request' && line.route === 'impersonation-denied')
        ? true
        : undefined,
    );

    // RBAC granted in the one cell that holds the object: now it reads.
    const cell = await cellOf(name);
    await grantRole(
      env.cells.find((c) => c.id === cell)!.kubeconfig,
      namespace,
      { name: 'read-configmaps', rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] },
      sa,
    );
    const allowed = await eventually('the cell to honour the new RoleBinding', async () => {
      const answer = await raw('GET', path, { headers: asReader, agent: anonymousTls });
      return answer.code === 200 ? answer : undefined;
    });
    expect(allowed.body).toMatchObject({ data: { secret: 'no' } });

    // The admin may impersonate: the cell then sees the reader, who may read but not delete.
    const impersonated = await raw('DELETE', path, { headers: { 'impersonate-user': user } });
    expect(impersonated).toMatchObject({ code: 403, body: { reason: 'Forbidden' } });
    expect(String(impersonated.body?.message)).toContain(user);
    // Credentials never reach the log.
    expect(JSON.stringify(router.lines)).not.toContain(token);
  });

  it('checks a client’s impersonation as kube-apiserver does: the user or service account, groups, extras, uid', async () => {
    const impersonator = 'impersonator';
    const target = 'deployer';
    await controlPlane.core.createNamespacedServiceAccount({
      namespace,
      body: { metadata: { name: target } },
    });
    const token = await serviceAccountToken(impersonator);
    // In the control plane, where the router asks: user bob (no extras), and service account `deployer`
    // as a service account (its user name is not granted).
    const planeConfig = new KubeConfig();
    planeConfig.loadFromFile(env.controlPlane.kubeconfig);
    const rbac = planeConfig.makeApiClient(RbacAuthorizationV1Api);
    const subjects = [{ kind: 'ServiceAccount', name: impersonator, namespace }];
    const clusterRole = `impersonate-bob-${namespace}`;
    await rbac.createClusterRole({
      body: {
        metadata: { name: clusterRole },
        rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['bob'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: clusterRole },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
        subjects,
      },
    });
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: 'impersonate-deployer' },
        rules: [
          {
            apiGroups: [''],
            resources: ['serviceaccounts'],
            verbs: ['impersonate'],
            resourceNames: [target],
          },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'impersonate-deployer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'impersonate-deployer' },
        subjects,
      },
    });
    const path = `/api/v1/namespaces/${namespace}/configmaps/anything`;
    const as = (headers: Record<string, string>) =>
      raw('GET', path, { headers: { authorization: `Bearer ${token}`, ...headers }, agent: anonymousTls });

    try {
      // bob alone passes the router; the cell then decides as bob (who may not read).
      const asBob = await eventually('the impersonation grant to be in force', async () => {
        const answer = await as({ 'impersonate-user': 'bob' });
        return String(answer.body?.message).includes('cannot get resource') ? answer : undefined;
      });
      expect(asBob).toMatchObject({ code: 403, body: { kind: 'Status', reason: 'Forbidden' } });
      expect(String(asBob.body?.message)).toContain('User "bob"');

      // bob with an extra the impersonator was not granted: refused by the router, as kube-apiserver would.
      const withExtra = await as({ 'impersonate-user': 'bob', 'impersonate-extra-scopes': 'admin' });
      expect(withExtra).toMatchObject({ code: 403, body: { kind: 'Status', reason: 'Forbidden' } });
      expect(String(withExtra.body?.message)).toContain(
        'cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io"',
      );
      const withUid = await as({ 'impersonate-user': 'bob', 'impersonate-uid': '0' });
      expect(String(withUid.body?.message)).toContain('cannot impersonate resource "uids"');

      // The service account, granted as one: honoured; its cell answers for it.
      const serviceAccount = `system:serviceaccount:${namespace}:${target}`;
      const asDeployer = await as({ 'impersonate-user': serviceAccount });
      expect(asDeployer).toMatchObject({ code: 403, body: { kind: 'Status', reason: 'Forbidden' } });
      expect(String(asDeployer.body?.message)).toContain(`User "${serviceAccount}" cannot get resource`);
    } finally {
      await rbac.deleteClusterRoleBinding({ name: clusterRole });
      await rbac.deleteClusterRole({ name: clusterRole });
    }
  });

  it('answers malformed paths and bodies with a Status and keeps serving', async () => {
    // Each create body is refused by the router itself, before any cell sees it.
    const cases: [body: string | Buffer, contentType: string, code: number][] = [
      ['[1, 2]', 'application/json', 400],
      ['metadata: [unclosed', 'application/yaml', 400],
      [Buffer.from('k8s\0\x12\x7fshort', 'binary'), 'application/vnd.kubernetes.protobuf', 400],
      [Buffer.from('not protobuf'), 'application/vnd.kubernetes.protobuf', 400],
      ['{"kind":"ConfigMap"}', 'application/json', 422],
      [`{"metadata":{"name":"big"},"data":{"a":"${'x'.repeat(3 * 1024 * 1024)}"}}`, 'application/json', 413],
    ];
    for (const [body, contentType, code] of cases) {
      const answer = await raw('POST', `/api/v1/namespaces/${namespace}/configmaps`, { body, contentType });
      expect({ contentType, code: answer.code, kind: answer.body?.kind }).toEqual({
        contentType,
        code,
        kind: 'Status',
      });
    }
    // Targets that are not paths, and a name that does not exist, over a raw TLS socket.
    const rawTarget = async (target: string) => {
      const socket = await adminSocket(env, router);
      socket.end(`GET ${target} HTTP/1.1\r\nhost: router\r\nconnection: close\r\n\r\n`);
      let text = '';
      for await (const chunk of socket) text += (chunk as Buffer).toString();
      return text;
    };
    const absolute = await rawTarget('http://elsewhere.invalid/api/v1/namespaces');
    expect(absolute).toMatch(/^HTTP\/1\.1 400/);
    expect(absolute).toContain('"kind":"Status"');
    const encoded = await raw('GET', `/api/v1/namespaces/${namespace}/configmaps/%2e%2e%2fsecrets`);
    expect(encoded.body).toMatchObject({ kind: 'Status' });
    expect(encoded.code).toBeGreaterThanOrEqual(400);
    // Still serving.
    const health = await fetch(`http://127.0.0.1:${router.httpPort}/readyz`);
    expect(health.status).toBe(200);
  });

  it('publishes requests by verb, resource, cell and code, and routing cases, on /metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${router.httpPort}/metrics`)).text();
    const cellIds = env.cells.map((cell) => cell.id);
    const lines = text.split('\n').filter((line) => line.startsWith('cellfed_router_requests_total{'));
    expect(
      lines.some(
        (line) =>
          cellIds.some((id) => line.includes(`cell="${id}"`)) && line.includes('resource="apps/deployments"'),
      ),
    ).toBe(true);
    expect(text).toMatch(/cellfed_router_route_cases_total\{case="4"\} [1-9]/);
    expect(text).toContain('cellfed_router_request_duration_seconds_bucket');
  });
});

describeE2e('cell router: exec, attach and port-forward are relayed as upgrades', () => {
  const env = e2eEnv();
  const cellSetName = `pods-${Date.now()}`;
  const namespace = 'default';
  let router: RouterProcess | undefined;
  let kubelet: Server | undefined;

  afterAll(async () => {
    await stopRouter(router);
    kubelet?.close();
    await deleteCellSet(env.controlPlane.kubeconfig, cellSetName);
  });

  it('carries an exec stream both ways through router, cell apiserver and kubelet', async () => {
    // A CellSet where Pods are cellular, and a router serving it.
    const spec: CellSetSpecInput = {
      cells: env.cells.map((cell) => ({
        id: cell.id,
        state: 'Normal',
        kubeconfigSecretRef: { name: cellSecretName(cell.id) },
      })),
      cellularResources: [{ group: '', version: 'v1', resource: 'pods' }],
    };
    await createCellSet(env.controlPlane.kubeconfig, cellSetName, spec);
    router = await startRouter(env, { args: ['--cellset', cellSetName] });
    const table = RoutingTable.fromCellSet(parseCellSetSpec(spec));
    const pod = `echo-${Date.now()}`;
    const cellId = table.route(table.keyOf({ namespace, name: pod })).oldCell;
    const cell = env.cells.find((c) => c.id === cellId)!;
    const pki = controlPlanePki(env);

    // A stand-in kubelet: the cell apiserver dials it (without verifying its certificate, the apiserver
    // default) and it answers an exec upgrade, then echoes.
    const seen: string[] = [];
    kubelet = createHttpsServer({
      cert: readFileSync(join(pki, 'apiserver.crt')),
      key: readFileSync(join(pki, 'apiserver.key')),
    });
    kubelet.on('upgrade', (req, socket) => {
      seen.push(`${req.method} ${req.url}`);
      socket.write(
        'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n',
      );
      socket.pipe(socket);
    });
    await new Promise<void>((resolve) => kubelet!.listen(0, '127.0.0.1', resolve));
    const kubeletPort = (kubelet.address() as AddressInfo).port;
    const cellClients = clientsFor(cell.kubeconfig);
    const node = `fake-node-${Date.now()}`;
    await cellClients.core.createNode({ body: { metadata: { name: node } } });
    await cellClients.core.replaceNodeStatus({
      name: node,
      body: {
        metadata: { name: node },
        status: {
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } },
        },
      },
    });
    // Through the router, so the pod lands in the ring's cell.
    const kubeconfig = routerKubeconfig(env, router, join(env.dir, `router-${cellSetName}.kubeconfig`));
    await eventually(
      'the pod to be created (the default ServiceAccount may still be on its way)',
      async () => {
        const created = await kubectl(kubeconfig, ['-n', namespace, 'create', '-f', '-'], {
          input: JSON.stringify({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: pod },
            spec: {
              nodeName: node,
              automountServiceAccountToken: false,
              containers: [{ name: 'c', image: 'busybox' }],
            },
          }),
        });
        return created.code === 0 ? true : undefined;
      },
    );
    await cellClients.core.readNamespacedPod({ name: pod, namespace });

    // The exec upgrade as client-go's SPDY executor sends it.
    const socket = await adminSocket(env, router);
    socket.write(
      [
        `POST /api/v1/namespaces/${namespace}/pods/${pod}/exec?command=cat&container=c&stdin=true&stdout=true HTTP/1.1`,
        'Host: router',
        'Connection: Upgrade',
        'Upgrade: SPDY/3.1',
        'X-Stream-Protocol-Version: v4.channel.k8s.io',
        '',
        '',
      ].join('\r\n'),
    );
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    await eventually('the 101 from the kubelet', async () =>
      received.includes('\r\n\r\n') ? true : undefined,
    );
    expect(received).toMatch(/^HTTP\/1\.1 101/);
    const afterHead = received.length;
    socket.write('ping through three hops');
    await eventually('the echo', async () =>
      received.slice(afterHead).includes('ping through three hops') ? true : undefined,
    );
    socket.destroy();
    expect(seen).toEqual([expect.stringMatching(new RegExp(`^POST /exec/${namespace}/${pod}/c\\?`))]);
    await eventually('the upgrade in the access log', async () =>
      router!.lines.some(
        (line) => line.msg === 'request' && String(line.route).startsWith('upgrade:') && line.cell === cellId,
      )
        ? true
        : undefined,
    );

    // kubectl exec on a pod with no host gets the apiserver's answer, relayed.
    const unscheduled = `${pod}-nohost`;
    await kubectl(kubeconfig, ['-n', namespace, 'create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: unscheduled },
        spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox' }] },
      }),
    });
    const exec = await kubectl(kubeconfig, ['-n', namespace, 'exec', unscheduled, '--', 'true']);
    expect(exec.code).not.toBe(0);
    expect(exec.out).toContain('does not have a host assigned');
    await cellClients.core.deleteNode({ name: node }).catch(() => undefined);
  });
});
