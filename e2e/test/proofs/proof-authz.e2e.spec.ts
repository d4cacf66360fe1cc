import { readFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import { Agent, request, type Dispatcher } from 'undici';

import { CELL_BACKUP_NAMESPACE, cellBackupCrd, parseCellSetSpec } from '@cellfed/api';
import { KubeClient } from '@cellfed/controller-kit';
import {
  APPLY_PATCH as APPLY,
  cellBackupName,
  cellBackupOf,
  cellBackupPath,
  type CellularObjectRef,
  type KubeObject,
} from '@cellfed/federation';
import { MIGRATING, REBALANCE_STATUS_LABEL, RoutingTable } from '@cellfed/hashing';

import {
  createCellSet,
  deleteCellSet,
  eventually,
  newServiceAccountToken,
  readCellSet,
  updateCellSet,
} from '../helpers/clients.ts';
import { clientCertificate } from '../helpers/client-certificate.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import { recordProof } from '../helpers/proof-results.ts';
import { controlPlanePki, startRouter, stopRouter, type RouterProcess } from '../helpers/router-process.ts';
import { seededRandom } from '../helpers/router-fuzz.ts';

/** Random requests beyond the table: a sample in every test run, more for the record (`e2e:proof`). */
const RANDOM_REQUESTS = Number(process.env['CELLFED_AUTHZ_REQUESTS'] ?? 400);
const SEED = Number(process.env['CELLFED_AUTHZ_SEED'] ?? 20261127);
const CONCURRENCY = 8;
/** More impersonated groups and extras than the router checks (docs/security.md): a documented 400. */
const OVER_THE_CAP = 70;

/** A caller: how it proves who it is. */
interface Caller {
  readonly name: string;
  readonly token?: string;
  /** A client certificate (signed by the control plane's CA, which the router trusts too). */
  readonly agent?: Dispatcher;
  /** That certificate, for a connection of its own (an upgrade). */
  readonly certificate?: { readonly cert: Buffer; readonly key: string };
}

interface Probe {
  readonly caller: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | string[]>;
  readonly body?: string;
  /** The body's media type: JSON unless a patch says otherwise. */
  readonly contentType?: string;
  /** Sent as an upgrade (an exec as kubectl asks for one, SPDY), on a connection of its own. */
  readonly upgrade?: boolean;
}

/** The bytes a probe's body uses for cellfed's own mark: however spelled, `cellfed.io/` (docs/security.md). */
const MARK_SPELLINGS = ['cellfed.io/', 'cellfed.io~1', 'cellfed.io\\/', 'cellfed.io\\u002f'];

/** A difference from one apiserver that docs/security.md documents: the router answers this, on purpose. */
function documentedDifference(probe: Probe, plain: number, router: number): string | undefined {
  if (probe.caller === 'anonymous' && router === 401) return 'anonymous requests are refused';
  if (router === 422 && plain < 300 && MARK_SPELLINGS.some((mark) => probe.body?.includes(mark)))
    return 'cellfed.io/ marks are cellfed’s';
  const groups = probe.headers['impersonate-group'];
  if (router === 400 && Array.isArray(groups) && groups.length > 64)
    return 'more than 64 impersonated values';
  return undefined;
}

/** What each store assigns an object itself, which two stores never share. */
const ASSIGNED = new Set([
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'managedFields',
  'generation',
  'selfLink',
]);
/** What a cell's own controllers write on an object (a Deployment's revision), where no controller runs on the plain side. */
const CONTROLLER_ANNOTATIONS = new Set(['deployment.kubernetes.io/revision']);
/** Kinds the cells' controllers make (docs/routing.md): each cell's own, named by its controllers. */
const CELL_MADE = /\/(pods|events|replicasets|endpoints|endpointslices)(\/|\?|$)/;

/**
 * What a successful answer tells its caller, to compare with one apiserver's: a list's kind and the names
 * in it; an object without what each store assigns itself (uids, versions, times) or what the cells' own
 * controllers add, and without its status (controllers run in the cells); undefined for anything else.
 */
function viewOf(body: unknown): unknown {
  const object = body as {
    kind?: string;
    items?: { metadata?: { namespace?: string; name?: string } }[];
    metadata?: Record<string, unknown> & {
      annotations?: Record<string, string>;
      ownerReferences?: Record<string, unknown>[];
    };
    status?: unknown;
  };
  if (Array.isArray(object?.items))
    return {
      kind: object.kind,
      names: object.items
        .map((item) => `${item.metadata?.namespace ?? ''}/${item.metadata?.name ?? ''}`)
        .sort(),
    };
  if (!object?.metadata) return undefined;
  // A Status (a delete's answer) names the object by the uid its store gave it.
  if (object.kind === 'Status') {
    const { details, ...status } = object as { details?: Record<string, unknown> };
    return { ...status, details: details && { ...details, uid: undefined } };
  }
  const { metadata, status: _status, ...rest } = object;
  const kept = Object.fromEntries(Object.entries(metadata).filter(([key]) => !ASSIGNED.has(key)));
  if (metadata.annotations) {
    const annotations = Object.entries(metadata.annotations).filter(
      ([key]) => !CONTROLLER_ANNOTATIONS.has(key),
    );
    if (annotations.length > 0) kept['annotations'] = Object.fromEntries(annotations);
    else delete kept['annotations'];
  }
  if (metadata.ownerReferences)
    kept['ownerReferences'] = metadata.ownerReferences.map(({ uid: _uid, ...owner }) => owner);
  return { ...rest, metadata: kept };
}

/**
 * The differential authorization proof: one plain kube-apiserver (the control plane, which holds its own
 * copies of the test's objects) and the federation (the router in front of the cells) get the same RBAC
 * and the same objects; every caller × request is sent to both. Through the router no request may succeed
 * where the plain apiserver refuses it (an escalation), and the codes must match but for the documented
 * differences. Writes are dry runs, so both sides stay as they are. The table covers each kind of caller
 * and request once; a seeded generator mixes them further.
 */
describeE2e('proof: the router authorizes as one kube-apiserver does', () => {
  const env = e2eEnv();
  const pki = controlPlanePki(env);
  const ca = readFileSync(join(pki, 'ca.crt'));
  const admin = KubeClient.fromFile(env.controlPlane.kubeconfig);
  const cells = env.cells.map((cell) => KubeClient.fromFile(cell.kubeconfig));
  /** The admin client of cell `id`. */
  const cellClient = (id: string) => cells[env.cells.findIndex((cell) => cell.id === id)]!;
  const suffix = Date.now().toString(36);
  const nsA = `authz-a-${suffix}`;
  const nsB = `authz-b-${suffix}`;
  const agents: Agent[] = [];
  let router: RouterProcess;
  let routerAdmin: KubeClient;
  const callers: Caller[] = [];
  /** The CellBackups the failover phase wrote by hand, deleted after. */
  const backups: { cell: string; name: string }[] = [];

  /** The same RBAC object in the control plane and in every cell (RBAC reaches cells as configured). */
  async function everywhere(path: string, object: Record<string, unknown>): Promise<void> {
    for (const client of [admin, ...cells]) await client.request('POST', path, { body: object });
  }

  const role = (namespace: string, name: string, rules: unknown[]) =>
    everywhere(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name },
      rules,
    });
  const roleBinding = (namespace: string, name: string, roleName: string, subjects: unknown[]) =>
    everywhere(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
      subjects,
    });
  const clusterRole = (name: string, rules: unknown[]) =>
    everywhere('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules,
    });
  const clusterRoleBinding = (name: string, subjects: unknown[]) =>
    everywhere('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects,
    });
  const serviceAccount = (name: string) => ({ kind: 'ServiceAccount', name, namespace: nsA });

  async function tokenCaller(name: string): Promise<Caller> {
    return { name, token: await newServiceAccountToken(env.controlPlane.kubeconfig, nsA, name) };
  }

  /** A client certificate of `subject`, signed by the control plane's CA with openssl. */
  function certificateCaller(name: string, subject: string): Caller {
    const { cert, key } = clientCertificate(pki, subject);
    const agent = new Agent({
      allowH2: false,
      connect: { ca, cert, key },
    });
    agents.push(agent);
    return { name, agent, certificate: { cert, key } };
  }

  const anonymousAgent = new Agent({ allowH2: false, connect: { ca } });
  agents.push(anonymousAgent);

  /**
   * An upgrade as kubectl exec sends it, on a TLS connection of its own: the code of the answer's head (a
   * 101, or the refusal). What was answered after the head is not read.
   */
  function upgradeCode(base: string, caller: Caller, probe: Probe): Promise<number> {
    const lines = [
      `${probe.method} ${probe.path} HTTP/1.1`,
      'Host: localhost',
      'Connection: Upgrade',
      'Upgrade: SPDY/3.1',
      'X-Stream-Protocol-Version: v4.channel.k8s.io',
      ...(caller.token ? [`Authorization: Bearer ${caller.token}`] : []),
      ...Object.entries(probe.headers).flatMap(([name, value]) =>
        [value].flat().map((one) => `${name}: ${one}`),
      ),
    ];
    return new Promise((resolve, reject) => {
      const socket = tlsConnect({
        ca,
        ...caller.certificate,
        host: '127.0.0.1',
        port: Number(new URL(base).port),
        servername: 'localhost',
        ALPNProtocols: ['http/1.1'],
      });
      let head = '';
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no answer from ${base} to the upgrade ${probe.path}`));
      }, 30_000);
      socket.once('secureConnect', () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
      socket.on('data', (chunk: Buffer) => {
        head += chunk.toString('latin1');
        const code = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1];
        if (!code || !head.includes('\r\n\r\n')) return;
        clearTimeout(timer);
        socket.destroy();
        resolve(Number(code));
      });
      socket.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  /** Sends `probe` to `base` (the router or the plain apiserver): its status code, and what it said (viewOf). */
  async function send(base: string, probe: Probe): Promise<{ code: number; view: unknown }> {
    const caller = callers.find((one) => one.name === probe.caller)!;
    if (probe.upgrade) return { code: await upgradeCode(base, caller, probe), view: undefined };
    const answer = await request(`${base}${probe.path}`, {
      method: probe.method as Dispatcher.HttpMethod,
      dispatcher: caller.agent ?? anonymousAgent,
      headers: {
        ...(caller.token ? { authorization: `Bearer ${caller.token}` } : {}),
        ...(probe.body ? { 'content-type': probe.contentType ?? 'application/json' } : {}),
        ...probe.headers,
      },
      ...(probe.body ? { body: probe.body } : {}),
      headersTimeout: 30_000,
    });
    // A watch streams: its code is the answer.
    if (answer.statusCode >= 300 || probe.path.includes('watch=') || probe.path.includes('/exec')) {
      answer.body.once('error', () => undefined);
      answer.body.destroy();
      return { code: answer.statusCode, view: undefined };
    }
    return { code: answer.statusCode, view: viewOf(await answer.body.json().catch(() => undefined)) };
  }

  /** Every request a caller may try, for one namespace: cellular, cell-made and control-plane kinds. */
  function requestsIn(namespace: string): Omit<Probe, 'caller' | 'headers'>[] {
    const cm = `/api/v1/namespaces/${namespace}/configmaps`;
    const configMap = (name: string) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace },
        data: { a: 'b' },
      });
    return [
      { method: 'GET', path: `${cm}/cm-1` },
      { method: 'GET', path: `${cm}/absent` },
      { method: 'GET', path: cm },
      { method: 'GET', path: `${cm}?watch=1&timeoutSeconds=1` },
      { method: 'POST', path: `${cm}?dryRun=All`, body: configMap('new-one') },
      { method: 'PUT', path: `${cm}/cm-1?dryRun=All`, body: configMap('cm-1') },
      { method: 'DELETE', path: `${cm}/cm-1?dryRun=All` },
      { method: 'DELETE', path: `${cm}?dryRun=All` },
      { method: 'GET', path: `/apis/apps/v1/namespaces/${namespace}/deployments/web` },
      { method: 'GET', path: `/apis/apps/v1/namespaces/${namespace}/deployments` },
      { method: 'GET', path: `/api/v1/namespaces/${namespace}/pods` },
      { method: 'GET', path: `/api/v1/namespaces/${namespace}/pods/absent` },
      { method: 'POST', path: `/api/v1/namespaces/${namespace}/pods/absent/exec?command=sh&stdout=true` },
      // Upgrades, as kubectl exec asks: of a pod that is there (no node runs it: one apiserver answers a
      // caller allowed the exec 400), and of one that is not.
      ...['p-1', 'absent'].map((pod) => ({
        method: 'POST',
        path: `/api/v1/namespaces/${namespace}/pods/${pod}/exec?command=date&stdout=true`,
        upgrade: true,
      })),
      { method: 'GET', path: `/api/v1/namespaces/${namespace}/events` },
      { method: 'GET', path: `/api/v1/namespaces/${namespace}/secrets/s-1` },
      { method: 'GET', path: `/api/v1/namespaces/${namespace}/serviceaccounts` },
      { method: 'GET', path: `/api/v1/namespaces/${namespace}` },
      // Label and field selectors.
      { method: 'GET', path: `${cm}?labelSelector=app%3Dweb` },
      { method: 'GET', path: `${cm}?fieldSelector=metadata.name%3Dcm-1` },
      // Patches of every type, a plain one and one writing cellfed's mark however it is spelled.
      ...patches(`${cm}/cm-1`, 'annotations'),
      ...patches(`/apis/apps/v1/namespaces/${namespace}/deployments/web/status`, 'labels'),
      { method: 'PUT', path: `${cm}/cm-1/status?dryRun=All`, body: configMap('cm-1') },
      { method: 'GET', path: `/apis/apps/v1/namespaces/${namespace}/deployments/web/scale` },
    ];
  }

  /** Dry-run patches of `path`: JSON (the mark's slash as ~1), merge (as \u002f), strategic (\/), apply. */
  function patches(path: string, map: 'labels' | 'annotations'): Omit<Probe, 'caller' | 'headers'>[] {
    const dryRun = `${path}?dryRun=All`;
    const mark = (spelled: string) => `{"metadata":{"${map}":{"${spelled}held-spec":"{}"}}}`;
    return [
      {
        method: 'PATCH',
        path: dryRun,
        contentType: 'application/json-patch+json',
        body: `[{"op":"add","path":"/metadata/${map}","value":{"team":"a"}}]`,
      },
      {
        method: 'PATCH',
        path: dryRun,
        contentType: 'application/json-patch+json',
        body: `[{"op":"add","path":"/metadata/${map}","value":{}},{"op":"add","path":"/metadata/${map}/cellfed.io~1held-spec","value":"{}"}]`,
      },
      { method: 'PATCH', path: dryRun, contentType: 'application/merge-patch+json', body: mark('team-') },
      {
        method: 'PATCH',
        path: dryRun,
        contentType: 'application/merge-patch+json',
        body: mark('cellfed.io\\u002f'),
      },
      {
        method: 'PATCH',
        path: dryRun,
        contentType: 'application/strategic-merge-patch+json',
        body: mark('cellfed.io\\/'),
      },
      {
        method: 'PATCH',
        path: `${dryRun}&fieldManager=authz-proof&force=true`,
        contentType: 'application/apply-patch+yaml',
        body: JSON.stringify({
          apiVersion: path.includes('/deployments/') ? 'apps/v1' : 'v1',
          kind: path.includes('/deployments/') ? 'Deployment' : 'ConfigMap',
          metadata: {
            name: path.includes('/deployments/') ? 'web' : 'cm-1',
            [map]: { 'cellfed.io/held-spec': '{}' },
          },
        }),
      },
    ];
  }

  const CLUSTER_REQUESTS: Omit<Probe, 'caller' | 'headers'>[] = [
    { method: 'GET', path: '/api/v1/configmaps' },
    { method: 'GET', path: '/api/v1/namespaces' },
    { method: 'GET', path: '/apis/apps/v1/deployments?watch=1&timeoutSeconds=1' },
    { method: 'GET', path: '/version' },
    { method: 'GET', path: '/apis/apps/v1' },
    { method: 'GET', path: '/metrics' },
  ];

  /** Impersonation in every shape kube-apiserver reads, and identity headers no caller should send. */
  const HEADER_VARIANTS: Record<string, string | string[]>[] = [
    {},
    { 'impersonate-user': 'bob' },
    { 'impersonate-user': 'bob', 'impersonate-group': 'team-a' },
    { 'impersonate-user': ['bob', 'carol'] },
    { 'impersonate-user': 'carol', 'impersonate-group': 'team-a,system:masters' },
    { 'impersonate-user': 'carol', 'impersonate-group': ['team-a', 'system:masters'] },
    { 'impersonate-user': `system:serviceaccount:${'NS_A'}:reader` },
    { 'impersonate-user': `system:serviceaccount:${'NS_A'}:Reader` },
    { 'impersonate-group': 'team-a' },
    { 'impersonate-user': 'bob', 'impersonate-extra-scopes': 'view' },
    { 'impersonate-user': 'bob', 'impersonate-extra-scopes': ['view', 'admin'] },
    { 'impersonate-user': 'bob', 'impersonate-uid': 'u-1' },
    { 'impersonate-user': 'bob', 'impersonate-uid': 'u-2' },
    { 'x-remote-user': 'system:admin', 'x-remote-group': 'system:masters' },
    {
      'impersonate-user': 'carol',
      'impersonate-group': Array.from({ length: OVER_THE_CAP }, () => 'team-a'),
    },
  ];
  const variant = (index: number) =>
    Object.fromEntries(
      Object.entries(HEADER_VARIANTS[index]!).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.map((one) => one.replace('NS_A', nsA)) : value.replace('NS_A', nsA),
      ]),
    );

  beforeAll(async () => {
    for (const name of [nsA, nsB])
      await admin.request('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
      });
    // Roles live in namespaces: the cells have them before any object is written there.
    for (const cell of cells)
      for (const name of [nsA, nsB])
        await cell.request('POST', '/api/v1/namespaces', {
          body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
        });
    router = await startRouter(env);
    routerAdmin = KubeClient.fromKubeconfig(
      readFileSync(env.controlPlane.kubeconfig, 'utf8').replace(env.controlPlane.url, router.url),
    );
    // The same objects on both sides: in the plain apiserver, and through the router in the cells.
    for (const client of [admin, routerAdmin])
      for (const namespace of [nsA, nsB]) {
        await client.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-1' }, data: { a: 'b' } },
        });
        await client.request('POST', `/apis/apps/v1/namespaces/${namespace}/deployments`, {
          body: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'web' },
            spec: {
              replicas: 0,
              selector: { matchLabels: { app: 'web' } },
              template: {
                metadata: { labels: { app: 'web' } },
                spec: { containers: [{ name: 'c', image: 'x' }] },
              },
            },
          },
        });
      }
    // A pod to exec into, the same on both sides (no node runs it here).
    for (const client of [admin, routerAdmin])
      for (const namespace of [nsA, nsB])
        await client.request('POST', `/api/v1/namespaces/${namespace}/pods`, {
          body: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: 'p-1' },
            spec: { containers: [{ name: 'c', image: 'x' }] },
          },
        });
    await admin.request('POST', `/api/v1/namespaces/${nsA}/secrets`, {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's-1' }, stringData: { k: 'v' } },
    });

    // RBAC: a namespace reader and writer, and each kind of impersonation.
    await role(nsA, 'reader', [
      { apiGroups: [''], resources: ['configmaps', 'serviceaccounts'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] },
    ]);
    await role(nsA, 'writer', [
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'create', 'update', 'patch', 'delete', 'deletecollection'],
      },
      // kubectl exec: the pod's get, then the upgrade's create of pods/exec.
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] },
    ]);
    await role(nsA, 'impersonate-reader', [
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'], resourceNames: ['reader'] },
    ]);
    await roleBinding(nsA, 'readers', 'reader', [
      serviceAccount('reader'),
      { kind: 'User', name: 'alice' },
      { kind: 'Group', name: 'team-a' },
      { kind: 'User', name: 'bob' },
      { kind: 'User', name: 'José O’Brien, Jr.' },
    ]);
    await roleBinding(nsA, 'writers', 'writer', [serviceAccount('writer')]);
    await roleBinding(nsA, 'impersonate-reader', 'impersonate-reader', [serviceAccount('imp-sa')]);
    await clusterRole(`authz-imp-user-${suffix}`, [
      { apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['bob'] },
    ]);
    await clusterRoleBinding(`authz-imp-user-${suffix}`, [serviceAccount('imp-user')]);
    await clusterRole(`authz-imp-group-${suffix}`, [
      { apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['carol'] },
      { apiGroups: [''], resources: ['groups'], verbs: ['impersonate'], resourceNames: ['team-a'] },
    ]);
    await clusterRoleBinding(`authz-imp-group-${suffix}`, [serviceAccount('imp-group')]);
    await clusterRole(`authz-imp-extra-${suffix}`, [
      { apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['bob'] },
      {
        apiGroups: ['authentication.k8s.io'],
        resources: ['userextras/scopes'],
        verbs: ['impersonate'],
        resourceNames: ['view'],
      },
      {
        apiGroups: ['authentication.k8s.io'],
        resources: ['uids'],
        verbs: ['impersonate'],
        resourceNames: ['u-1'],
      },
    ]);
    await clusterRoleBinding(`authz-imp-extra-${suffix}`, [serviceAccount('imp-extra')]);

    for (const name of ['mallory', 'reader', 'writer', 'imp-user', 'imp-sa', 'imp-group', 'imp-extra'])
      callers.push(await tokenCaller(name));
    callers.push(certificateCaller('alice', '/O=team-a/CN=alice'));
    callers.push(certificateCaller('odd-name', '/O=team-b/CN=José O’Brien, Jr.'));
    // A certificate whose CN is a service account's name, without the groups a service account has.
    callers.push(certificateCaller('sa-named', `/CN=system:serviceaccount:${nsA}:reader`));
    callers.push({ name: 'anonymous' });
  }, 120_000);

  afterAll(async () => {
    await stopRouter(router);
    for (const backup of backups)
      await cellClient(backup.cell)
        .request('DELETE', cellBackupPath(backup.name))
        .catch(() => undefined);
    // From the cells too: no controller runs here to carry the control plane's deletion over, and an object
    // left in a namespace the control plane no longer has would hold a later rebalance.
    for (const client of [admin, ...cells])
      for (const name of [nsA, nsB])
        await client.request('DELETE', `/api/v1/namespaces/${name}`).catch(() => undefined);
    for (const client of [admin, ...cells])
      for (const kind of ['imp-user', 'imp-group', 'imp-extra']) {
        const name = `authz-${kind}-${suffix}`;
        await client
          .request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`)
          .catch(() => undefined);
        await client
          .request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`)
          .catch(() => undefined);
      }
    for (const client of [admin, routerAdmin, ...cells]) await client?.close();
    for (const agent of agents) await agent.close();
  });

  /**
   * Sends every probe to the plain apiserver and through the router at `routerUrl`: the requests the router
   * let through that the apiserver refused (escalations), the differences `explain` does not account for
   * (mismatches), those it does, by what it says, and every `plain → router` pair of codes, so the record
   * shows what was allowed and refused, not only that they agree.
   */
  async function compare(
    table: readonly Probe[],
    routerUrl: string,
    explain: (probe: Probe, plain: number, router: number) => string | undefined,
    /** A documented difference in what a successful answer says, if this is one. */
    explainBody: (probe: Probe, plain: unknown, router: unknown) => string | undefined = () => undefined,
  ) {
    const mismatches: { probe: Probe; plain: number; router: number }[] = [];
    const escalations: { probe: Probe; plain: number; router: number }[] = [];
    const documented = new Map<string, number>();
    const pairs = new Map<string, number>();
    /** Successful answers whose content differs from one apiserver's (what a caller reads or would write). */
    const bodyMismatches: { probe: Probe; plain: unknown; router: unknown }[] = [];
    let bodiesCompared = 0;
    let cellMade = 0;
    let matched = 0;
    const queue = [...table];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let probe = queue.pop(); probe; probe = queue.pop()) {
          const { code: plain, view: plainView } = await send(env.controlPlane.url, probe);
          const { code: routed, view: routedView } = await send(routerUrl, probe);
          const pair = `${plain} → ${routed}`;
          pairs.set(pair, (pairs.get(pair) ?? 0) + 1);
          if (routed < 400 && plain >= 400) escalations.push({ probe, plain, router: routed });
          if (routed === plain) {
            matched++;
            if (plain < 300 && (plainView !== undefined || routedView !== undefined)) {
              // The cells' controllers name what they make there; one apiserver's name theirs.
              if (CELL_MADE.test(probe.path)) cellMade++;
              else if (isDeepStrictEqual(plainView, routedView)) bodiesCompared++;
              else {
                const difference = explainBody(probe, plainView, routedView);
                if (difference) documented.set(difference, (documented.get(difference) ?? 0) + 1);
                else bodyMismatches.push({ probe, plain: plainView, router: routedView });
              }
            }
          } else {
            const difference = explain(probe, plain, routed);
            if (difference) documented.set(difference, (documented.get(difference) ?? 0) + 1);
            else mismatches.push({ probe, plain, router: routed });
          }
        }
      }),
    );
    return { escalations, mismatches, documented, pairs, matched, bodyMismatches, bodiesCompared, cellMade };
  }

  /** The table's requests: both namespaces' and the cluster's. */
  const tableRequests = () => [...requestsIn(nsA), ...requestsIn(nsB), ...CLUSTER_REQUESTS];
  /** Every caller × every request of the table, as it is: no impersonation, nothing random. */
  const plainTable = (): Probe[] =>
    callers.flatMap((caller) => tableRequests().map((one) => ({ caller: caller.name, headers: {}, ...one })));

  it('never lets a request through that one apiserver refuses, and answers with its codes', async () => {
    const requests = tableRequests();
    const table = plainTable();
    // Each impersonation shape once per caller, on a request its target may or may not make.
    for (const caller of callers)
      for (let index = 1; index < HEADER_VARIANTS.length; index++)
        for (const path of [
          `/api/v1/namespaces/${nsA}/configmaps/cm-1`,
          `/api/v1/namespaces/${nsB}/configmaps`,
        ])
          table.push({ caller: caller.name, method: 'GET', path, headers: variant(index) });
    const random = seededRandom(SEED);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    for (let i = 0; i < RANDOM_REQUESTS; i++)
      table.push({
        caller: pick(callers).name,
        headers: variant(Math.floor(random() * HEADER_VARIANTS.length)),
        ...pick(requests),
      });

    const reviews = async () => {
      const text = await (await request(`http://127.0.0.1:${router.httpPort}/metrics`)).body.text();
      return Number(/cellfed_router_reviews_total\{kind="subjectaccessreview"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    // Each caller once before the comparison, one at a time: its token is then known to the router, whose
    // first reviews of many new tokens at once from one address may be a 429 to retry (docs/security.md).
    for (const caller of callers)
      await send(router.url, { caller: caller.name, method: 'GET', path: '/version', headers: {} });
    const reviewsBefore = await reviews();
    const { escalations, mismatches, documented, pairs, matched, bodyMismatches, bodiesCompared, cellMade } =
      await compare(table, router.url, documentedDifference);
    const reviewsSent = (await reviews()) - reviewsBefore;
    recordProof('authz', {
      proof: `${table.length} requests (a table of ${table.length - RANDOM_REQUESTS} and ${RANDOM_REQUESTS} seeded at random, seed ${SEED}) from ${callers.length} callers, each sent to one plain kube-apiserver and through the router to ${env.cells.length} cells with the same RBAC`,
      goals: { privilegeEscalations: '= 0', mismatches: '= 0', bodyMismatches: '= 0' },
      figures: {
        requests: table.length,
        privilegeEscalations: escalations.length,
        mismatches: mismatches.length,
        // What each caller read, or would have written (dry runs), the same as from one apiserver.
        bodiesCompared,
        bodyMismatches: bodyMismatches.length,
        cellMadeBodiesNotCompared: cellMade,
        documentedDifferences: [...documented.values()].reduce((sum, count) => sum + count, 0),
        routerSubjectAccessReviewsPerRequest: Math.round((reviewsSent / table.length) * 1000) / 1000,
      },
      measured: {
        matched,
        codes: Object.fromEntries([...pairs].sort(([a], [b]) => a.localeCompare(b))),
        callers: callers.map((caller) => caller.name),
        documented: Object.fromEntries(documented),
        mismatches: mismatches.slice(0, 20),
        bodyMismatches: bodyMismatches.slice(0, 10),
      },
    });
    expect(escalations).toEqual([]);
    expect(bodyMismatches.slice(0, 5)).toEqual([]);
    // Reads, lists and dry-run writes were compared, not only codes (about 50 of the ~76 successful answers
    // here: the others are watches, discovery and the like, whose content is not an object or a list).
    expect(bodiesCompared).toBeGreaterThanOrEqual(40);
    // The table reaches both sides of every decision: allowed reads and dry-run writes, and refusals.
    expect([...pairs.keys()]).toEqual(expect.arrayContaining(['200 → 200', '201 → 201', '403 → 403']));
    // And of an exec: the router lets through the upgrade of a caller allowed it (the cell's 400: no node
    // runs the pod), and refuses the others' with one apiserver's 403.
    const exec = (caller: string) =>
      send(router.url, {
        caller,
        method: 'POST',
        path: `/api/v1/namespaces/${nsA}/pods/p-1/exec?command=date&stdout=true`,
        headers: {},
        upgrade: true,
      });
    expect([(await exec('writer')).code, (await exec('reader')).code]).toEqual([400, 403]);
    expect(mismatches.slice(0, 10)).toEqual([]);
    // Every documented difference was met, so the table still tries it.
    expect([...documented.keys()].sort()).toEqual([
      'anonymous requests are refused',
      'cellfed.io/ marks are cellfed’s',
      'more than 64 impersonated values',
    ]);
    // No caller wrote a mark: what the cells hold of the table's objects carries none.
    const marks: string[] = [];
    for (const namespace of [nsA, nsB])
      for (const path of [
        `/api/v1/namespaces/${namespace}/configmaps/cm-1`,
        `/apis/apps/v1/namespaces/${namespace}/deployments/web`,
      ])
        for (const cell of cells) {
          const object = await cell.request<KubeObject>('GET', path).catch(() => undefined);
          const { labels = {}, annotations = {} } = object?.metadata ?? {};
          marks.push(
            ...[...Object.keys(labels), ...Object.keys(annotations)].filter((key) =>
              key.includes('held-spec'),
            ),
          );
        }
    expect(marks).toEqual([]);
  }, 600_000);

  it('while the table’s objects move, and while their cell is Down: no escalation, and only the documented answers differ', async () => {
    // A CellSet of the test's own over the same cells, and a router of its own in front of it.
    const base = (await readCellSet(env.controlPlane.kubeconfig, env.cellSet)) as {
      spec: { cells: { id: string; state: string }[] } & Record<string, unknown>;
    };
    const ids = base.spec.cells.filter((cell) => cell.state === 'Normal').map((cell) => cell.id);
    expect(ids.length).toBeGreaterThan(1);
    const specWith = (states: Record<string, string>) => ({
      ...base.spec,
      cells: base.spec.cells.map((cell) => ({ ...cell, state: states[cell.id] ?? cell.state })),
    });
    const healthy = RoutingTable.fromCellSet(parseCellSetSpec(base.spec));
    const objects: { ref: CellularObjectRef; path: string }[] = [nsA, nsB].flatMap((namespace) => [
      {
        ref: { resource: { group: '', version: 'v1', resource: 'configmaps' }, namespace, name: 'cm-1' },
        path: `/api/v1/namespaces/${namespace}/configmaps/cm-1`,
      },
      {
        ref: { resource: { group: 'apps', version: 'v1', resource: 'deployments' }, namespace, name: 'web' },
        path: `/apis/apps/v1/namespaces/${namespace}/deployments/web`,
      },
    ]);
    const cellOf = (ref: CellularObjectRef) => healthy.route(healthy.keyOf(ref)).oldCell;
    // The cell of nsA's ConfigMap (the one object of the table a caller, its writer, may write) moves what
    // of the table it holds, then fails.
    const moving = cellOf(objects[0]!.ref);
    const affected = objects.filter((object) => cellOf(object.ref) === moving);
    const label = (value: string | null) =>
      Promise.all(
        affected.map((object) =>
          cellClient(moving).request('PATCH', object.path, {
            body: { metadata: { labels: { [REBALANCE_STATUS_LABEL]: value } } },
            contentType: 'application/merge-patch+json',
          }),
        ),
      );
    const cellSetName = `authz-${suffix}`;
    await createCellSet(env.controlPlane.kubeconfig, cellSetName, specWith({ [moving]: 'Draining' }));
    const scratch = await startRouter(env, { args: ['--cellset', cellSetName], cells: ids });
    const scratchAdmin = KubeClient.fromKubeconfig(
      readFileSync(env.controlPlane.kubeconfig, 'utf8').replace(env.controlPlane.url, scratch.url),
    );
    /** An allowed write to an affected object, through the scratch router: its code. */
    const adminWrite = () =>
      scratchAdmin
        .request('PATCH', `${affected[0]!.path}?dryRun=All`, {
          body: { metadata: { labels: { written: 'yes' } } },
          contentType: 'application/merge-patch+json',
        })
        .then(
          () => 200,
          (error: unknown) => (error as { statusCode?: number }).statusCode ?? 0,
        );
    /**
     * Once the scratch router holds back an allowed write (`why`), the table through it: a write the plain
     * apiserver takes may get its 429 (`why`), every other difference is documented or a mismatch.
     */
    const whileWritesHeld = async (
      why: string,
      explainBody?: (probe: Probe, plain: unknown, router: unknown) => string | undefined,
    ) => {
      await eventually(`the router to hold an allowed write back: ${why}`, async () =>
        (await adminWrite()) === 429 ? true : undefined,
      );
      return compare(
        plainTable(),
        scratch.url,
        (probe, plain, routed) =>
          documentedDifference(probe, plain, routed) ??
          (routed === 429 && plain < 300 && probe.method !== 'GET' ? why : undefined),
        explainBody,
      );
    };
    /**
     * A list while a cell is Down, before its objects are promoted: it has everything one apiserver's has
     * but those objects (a GET reads each from its backup; a list does not yet: docs/failover.md).
     */
    const unpromotedNotListed = (_probe: Probe, plain: unknown, routed: unknown) => {
      const names = (view: unknown) => (view as { names?: string[] } | undefined)?.names;
      const [had, got] = [names(plain), names(routed)];
      if (!had || !got || !got.every((name) => had.includes(name))) return undefined;
      const missing = had.filter((name) => !got.includes(name));
      const unpromoted = new Set(affected.map((object) => `${object.ref.namespace}/${object.ref.name}`));
      return missing.length > 0 && missing.every((name) => unpromoted.has(name))
        ? 'a Down cell’s objects are listed once promoted'
        : undefined;
    };
    const phases: Record<string, unknown> = {};
    try {
      // During a move: the old copies say `migrating` (the router's reading; the cell's own fence needs the
      // controller's annotation too, so the test can take the label off again).
      await label(MIGRATING);
      const move = await whileWritesHeld('a write to an object in flight is fenced');

      // During a failover: the cell is Down (its apiserver still runs, but nothing routes to it), each of its
      // objects has a backup in its backup cell, and no controller promotes one.
      await label(null);
      const down = specWith({ [moving]: 'Down' });
      const failed = RoutingTable.fromCellSet(parseCellSetSpec(down));
      for (const object of affected) {
        const stored = await cellClient(moving).request<KubeObject>('GET', object.path);
        const backupCell = failed.route(failed.keyOf(object.ref)).oldCell;
        // What the backup controller prepares in a cell: the CellBackup CRD and the reserved namespace.
        const crd = cellBackupCrd();
        await cellClient(backupCell).request(
          'PATCH',
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
          { body: crd, contentType: APPLY, query: { fieldManager: 'authz-proof', force: true } },
        );
        await cellClient(backupCell).request('PATCH', `/api/v1/namespaces/${CELL_BACKUP_NAMESPACE}`, {
          body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CELL_BACKUP_NAMESPACE } },
          contentType: APPLY,
          query: { fieldManager: 'authz-proof' },
        });
        const backup = cellBackupOf(stored, object.ref, { primaryCell: moving, backupCell });
        await eventually('the backup to be written (the CRD established)', () =>
          cellClient(backupCell)
            .request('POST', cellBackupPath(), { body: backup })
            .then(
              () => true,
              () => undefined,
            ),
        );
        backups.push({ cell: backupCell, name: cellBackupName(object.ref) });
      }
      await updateCellSet(env.controlPlane.kubeconfig, cellSetName, down);
      const failover = await whileWritesHeld(
        'a write to a Down cell’s object waits for its promotion',
        unpromotedNotListed,
      );

      for (const [name, phase] of Object.entries({ move, failover }))
        phases[name] = {
          requests: [...phase.pairs.values()].reduce((sum, count) => sum + count, 0),
          privilegeEscalations: phase.escalations.length,
          mismatches: phase.mismatches.length,
          bodiesCompared: phase.bodiesCompared,
          bodyMismatches: phase.bodyMismatches.length,
          codes: Object.fromEntries([...phase.pairs].sort(([a], [b]) => a.localeCompare(b))),
          documented: Object.fromEntries(phase.documented),
          examples: [...phase.escalations, ...phase.mismatches, ...phase.bodyMismatches].slice(0, 10),
        };
      recordProof('authz-move-failover', {
        proof: `the table (${plainTable().length} requests, every caller) through a router whose CellSet first moves, then loses, the cell of ${affected.length} of the table's objects (${moving}), against one plain kube-apiserver`,
        goals: { privilegeEscalations: '= 0', mismatches: '= 0', bodyMismatches: '= 0' },
        figures: {
          privilegeEscalations: move.escalations.length + failover.escalations.length,
          mismatches: move.mismatches.length + failover.mismatches.length,
          bodyMismatches: move.bodyMismatches.length + failover.bodyMismatches.length,
        },
        measured: phases,
      });
      expect(move.escalations).toEqual([]);
      expect(failover.escalations).toEqual([]);
      expect(move.mismatches.slice(0, 10)).toEqual([]);
      expect(failover.mismatches.slice(0, 10)).toEqual([]);
      // What a caller reads of a moving object, or of one served from its backup, is what one apiserver says.
      expect(move.bodyMismatches.slice(0, 5)).toEqual([]);
      expect(failover.bodyMismatches.slice(0, 5)).toEqual([]);
      // Not vacuous: reads of the moving and the failed-over objects were compared (about 30 and 18 here).
      expect(move.bodiesCompared).toBeGreaterThanOrEqual(10);
      expect(failover.bodiesCompared).toBeGreaterThanOrEqual(10);
      // Both phases met what they are about: an allowed write held back, a refused one refused as before.
      expect([...move.documented.keys()]).toContain('a write to an object in flight is fenced');
      expect([...failover.documented.keys()]).toContain(
        'a write to a Down cell’s object waits for its promotion',
      );
      for (const phase of [move, failover]) expect(phase.pairs.get('403 → 403') ?? 0).toBeGreaterThan(0);
    } finally {
      await label(null).catch(() => undefined);
      await stopRouter(scratch);
      await scratchAdmin.close();
      await deleteCellSet(env.controlPlane.kubeconfig, cellSetName);
    }
  }, 600_000);
});
