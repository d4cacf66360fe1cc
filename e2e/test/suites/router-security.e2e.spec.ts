import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';

import { ORPHANED_DEPENDENTS_REASON, parseCellSet } from '@cellfed/api';
import { RoutingTable } from '@cellfed/hashing';
import { Agent, request } from 'undici';

import { localCellUser } from '@cellfed/cells/chart/cell-identities.ts';
import { KubeClient } from '@cellfed/controller-kit';

import { clientCertificate } from '../helpers/client-certificate.ts';
import {
  clientsFor,
  eventually,
  grantRole,
  newServiceAccountToken,
  readCellSet,
} from '../helpers/clients.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import { answersOnOneConnection } from '../helpers/one-connection.ts';
import { controlPlanePki, startRouter, stopRouter, type RouterProcess } from '../helpers/router-process.ts';

/**
 * The router as a security boundary, tried as an attacker would: a caller with no rights at all (a fresh
 * ServiceAccount's token) gets what one kube-apiserver would give it, and nothing is done or told on its
 * behalf before it is known to be allowed. One router, one namespace, shared by every test.
 */
describeE2e('cell router: a caller gets nothing one apiserver would refuse it', () => {
  const env = e2eEnv();
  const pki = controlPlanePki(env);
  const controlPlane = clientsFor(env.controlPlane.kubeconfig);
  const cells = Object.fromEntries(env.cells.map((cell) => [cell.id, clientsFor(cell.kubeconfig)]));
  const namespace = `security-${Date.now()}`;
  let router: RouterProcess;
  let tls: Agent;
  /** mallory: a ServiceAccount bound to nothing. */
  let mallory = '';
  const ca = readFileSync(join(controlPlanePki(env), 'ca.crt'));

  /** A new ServiceAccount `name` in the test namespace, and a token for it (an hour). */
  const serviceAccountToken = (name: string) =>
    newServiceAccountToken(env.controlPlane.kubeconfig, namespace, name);

  /** One request through the router with `token`; the code and the Status or object answered. */
  async function as(token: string, method: string, path: string, body?: unknown) {
    const response = await request(`${router.url}${path}`, {
      method: method as 'GET',
      dispatcher: tls,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    return { code: response.statusCode, body: JSON.parse(text) as Record<string, unknown> };
  }

  /** A request head as a client writes it, with mallory's token. */
  const head = (requestLine: string, extra: string[] = []) =>
    [requestLine, 'Host: router', `Authorization: Bearer ${mallory}`, ...extra, '', ''].join('\r\n');

  beforeAll(async () => {
    await controlPlane.core.createNamespace({ body: { metadata: { name: namespace } } });
    mallory = await serviceAccountToken('mallory');
    router = await startRouter(env);
    tls = new Agent({ connect: { ca: readFileSync(join(pki, 'ca.crt')) } });
  });

  afterAll(async () => {
    await stopRouter(router);
    await tls?.close();
    await controlPlane.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it.each([
    [
      'a plain GET that asks for an upgrade',
      () =>
        head(`GET /api/v1/namespaces/${namespace}/configmaps/x HTTP/1.1`, [
          'Connection: Upgrade',
          'Upgrade: websocket',
        ]),
      400,
    ],
    [
      'an exec it may not make',
      () =>
        head(`POST /api/v1/namespaces/${namespace}/pods/nothing/exec?command=sh&stdout=true HTTP/1.1`, [
          'Connection: Upgrade',
          'Upgrade: SPDY/3.1',
          'X-Stream-Protocol-Version: v4.channel.k8s.io',
        ]),
      403,
    ],
  ])(
    'never serves a request smuggled behind %s: one answer, its own, then the connection closes',
    async (_what, upgrade, code) => {
      // Without a credential the smuggled requests would be mallory's 401s; with one, its 403s. Served as the
      // router, they were 200s with every Secret of kube-system.
      const smuggled = [
        head('GET /api/v1/namespaces/kube-system/secrets HTTP/1.1'),
        'GET /api/v1/configmaps HTTP/1.1\r\nHost: router\r\n\r\n',
      ].join('');
      const { answer, closed } = await answersOnOneConnection(router.url, { ca }, upgrade() + smuggled);
      const statusLines = answer.match(/^HTTP\/1\.1 \d{3}[^\r]*/gm) ?? [];
      expect(statusLines).toEqual([expect.stringMatching(new RegExp(`^HTTP/1\\.1 ${code} `))]);
      expect(closed).toBe(true);
      expect(answer).not.toContain('SecretList');
      expect(answer).not.toContain('ConfigMapList');
    },
  );

  it('keeps an idle HTTP/1.1 connection as long as kube-apiserver does (90 s), not Node’s 5 s', async () => {
    // A client that reuses a connection later than the server keeps it loses the request it writes as the
    // server closes it; Go's transport keeps idle connections 90 s, as kube-apiserver does.
    // node:https, which shows the hop-by-hop headers undici keeps to itself.
    const answer = await new Promise<{ code?: number; keepAlive: unknown }>((resolve, reject) => {
      const url = new URL(`${router.url}/version`);
      const call = httpsRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          ca,
          agent: false,
          headers: { authorization: `Bearer ${mallory}`, connection: 'keep-alive' },
        },
        (response) => {
          response.resume();
          response.once('end', () =>
            resolve({ code: response.statusCode, keepAlive: response.headers['keep-alive'] }),
          );
        },
      );
      call.once('error', reject);
      call.end();
    });
    expect(answer).toEqual({ code: 200, keepAlive: 'timeout=90' });
  });

  it("serves no caller known, or impersonating someone known, by a name cellfed's components call the cells as", async () => {
    // In the cells those names pass the reserved-marks policy and the mirrored admission objects (the
    // controllers' the write fence too): a caller by one of them would be cellfed there. One apiserver would
    // serve both requests.
    const component = localCellUser('backup-controller');
    // Its own name it also asks of every cell, whatever it was given (the shared identity has no flag).
    const ownNames = router.lines.filter(
      (line) => line['msg'] === 'the router’s own user in the cell: refused as a caller',
    );
    expect(ownNames.map((line) => [line['cell'], line['user']]).sort()).toEqual(
      env.cells.map((cell) => [cell.id, localCellUser('router')]).sort(),
    );
    const configMaps = `/api/v1/namespaces/${namespace}/configmaps`;
    const { cert, key } = clientCertificate(pki, `/CN=${component}`);
    const named = new Agent({ connect: { ca, cert, key } });
    try {
      for (const base of [env.controlPlane.url, router.url]) {
        const answer = await request(`${base}${configMaps}`, { dispatcher: named });
        const status = (await answer.body.json()) as { message: string };
        expect({ base, code: answer.statusCode }).toEqual({ base, code: 403 });
        // The control plane knows the certificate (RBAC refuses it); the router refuses the name itself.
        expect(status.message).toContain(
          base === router.url
            ? `User "${component}" is a name cellfed's components call the cells as`
            : `User "${component}" cannot list resource "configmaps"`,
        );
      }
    } finally {
      await named.close();
    }
    // Impersonation: a caller allowed to impersonate a component's name is refused once it is allowed.
    const impersonator = await serviceAccountToken('impersonator');
    const rbac = KubeClient.fromFile(env.controlPlane.kubeconfig);
    const grant = `${namespace}-impersonate`;
    await rbac.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      body: {
        metadata: { name: grant },
        rules: [
          {
            apiGroups: [''],
            resources: ['users'],
            verbs: ['impersonate'],
            resourceNames: [component, 'carol'],
          },
        ],
      },
    });
    await rbac.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: {
        metadata: { name: grant },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: grant },
        subjects: [{ kind: 'ServiceAccount', name: 'impersonator', namespace }],
      },
    });
    try {
      const asUser = async (user: string) => {
        const answer = await request(`${router.url}${configMaps}`, {
          dispatcher: tls,
          headers: { authorization: `Bearer ${impersonator}`, 'impersonate-user': user },
        });
        return {
          code: answer.statusCode,
          message: ((await answer.body.json()) as { message: string }).message,
        };
      };
      const asComponent = await eventually('the impersonation grant to be in force', async () => {
        const answer = await asUser(component);
        return answer.message.includes('cannot impersonate') ? undefined : answer;
      });
      expect(asComponent).toEqual({
        code: 403,
        message: expect.stringContaining(
          `User "${component}" is a name cellfed's components call the cells as`,
        ),
      });
      // Anyone else is impersonated as before: carol's own RBAC answers.
      expect(await asUser('carol')).toEqual({
        code: 403,
        message: expect.stringContaining('User "carol" cannot list resource "configmaps"'),
      });
    } finally {
      await rbac.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${grant}`);
      await rbac.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${grant}`);
      await rbac.close();
    }
  });

  it('writes no orphaning record for a caller who may read an owner but not delete it', async () => {
    const reader = await serviceAccountToken('owner-reader');
    const owner = await controlPlane.core.createNamespacedServiceAccount({
      namespace,
      body: { metadata: { name: 'orphan-owner' } },
    });
    await grantRole(
      env.controlPlane.kubeconfig,
      namespace,
      {
        name: 'read-service-accounts',
        rules: [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get'] }],
      },
      'owner-reader',
    );
    const path = `/api/v1/namespaces/${namespace}/serviceaccounts/orphan-owner`;
    expect((await as(reader, 'GET', path)).code).toBe(200);
    const deleted = await as(reader, 'DELETE', `${path}?propagationPolicy=Orphan`);
    expect(deleted).toMatchObject({ code: 403, body: { reason: 'Forbidden' } });
    const events = await controlPlane.core.listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.uid=${owner.metadata!.uid!},reason=${ORPHANED_DEPENDENTS_REASON}`,
    });
    expect(events.items).toEqual([]);
    // Still there: the refusal was the control plane's own.
    expect((await as(reader, 'GET', path)).code).toBe(200);
  });

  it('creates no namespace in a cell for a write the caller may not make', async () => {
    // A namespace only the control plane has: the router would create it in the ring's cell ahead of a
    // write, as itself.
    const fresh = `${namespace}-fresh`;
    await controlPlane.core.createNamespace({ body: { metadata: { name: fresh } } });
    try {
      const name = 'never';
      const cellSet = parseCellSet(await readCellSet(env.controlPlane.kubeconfig, env.cellSet));
      const table = RoutingTable.fromCellSet(cellSet.spec);
      const cell = table.route(table.keyOf({ namespace: fresh, name })).oldCell;
      const written = await as(mallory, 'PUT', `/api/v1/namespaces/${fresh}/configmaps/${name}`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: fresh },
      });
      expect(written).toMatchObject({ code: 403, body: { reason: 'Forbidden' } });
      expect(String(written.body['message'])).toBe(
        `configmaps "${name}" is forbidden: User "system:serviceaccount:${namespace}:mallory" cannot update resource "configmaps" in API group "" in the namespace "${fresh}"`,
      );
      const inCell = await cells[cell]!.core.readNamespace({ name: fresh }).then(
        () => true,
        () => false,
      );
      expect(inCell).toBe(false);
    } finally {
      await controlPlane.core.deleteNamespace({ name: fresh });
    }
  });
});
