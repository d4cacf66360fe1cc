import {
  BACKUP_CELL_LABEL,
  BACKUP_SOURCE_ANNOTATION,
  PRIMARY_CELL_LABEL,
  PROMOTED_FROM_ANNOTATION,
  PROMOTION_REQUESTED_ANNOTATION,
  parseCellSetSpec,
} from '@cellfed/api';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect as http2Connect, createServer as createHttp2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';

import { KubeClient } from '@cellfed/controller-kit';
import { cellBackupName, formatObjectKey } from '@cellfed/federation';
import { memoryLogger, metricValue, recordingTracer } from '@cellfed/controller-kit/testing';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import { Registry } from 'prom-client';

import { RouterMetrics } from '../metrics/router-metrics.ts';
import { routingState } from '../routing/route-plan.ts';
import { OldCopies } from '../destinations/old-copies.ts';
import { PromotionRequests } from '../destinations/promotion-requests.ts';
import { RouterHandler, type RouterHandlerOptions } from './router-handler.ts';

/** What a fake apiserver saw: method, target, headers and body of every request. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A fake apiserver's answer: JSON, or text of `type` (Go's mux answers unknown paths in plain text). */
type Answer = { code: number; body: unknown; type?: string };

/** The parts of the router's answers these tests read. */
interface Body {
  kind?: string;
  message?: string;
  metadata: { name?: string };
  items: { metadata: { name: string } }[];
}

/** A scripted apiserver over plain HTTP: answers with `answer(seen)` and records what it saw. */
async function fakeApiserver(
  answer: (seen: Seen) => Answer,
): Promise<{ server: Server; client: KubeClient; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const one = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      seen.push(one);
      const { code, body, type } = answer(one);
      res.writeHead(code, { 'content-type': type ?? 'application/json' });
      res.end(type ? String(body) : JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = KubeClient.fromKubeconfig(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } },
      ],
      users: [{ name: 'u', user: { token: 'router-token' } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'c',
    }),
  );
  return { server, client, seen };
}

const spec = parseCellSetSpec({
  cells: [
    { id: 'a', state: 'Normal', kubeconfigSecretRef: { name: 'a-kubeconfig' } },
    { id: 'b', state: 'Joining', kubeconfigSecretRef: { name: 'b-kubeconfig' } },
  ],
});

const alreadyExists = {
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  reason: 'AlreadyExists',
  code: 409,
};

describe('RouterHandler', () => {
  let front: Server;
  let handler: RouterHandler;
  let cells: Record<string, Awaited<ReturnType<typeof fakeApiserver>>>;
  let registry: Registry;
  let logLines: Record<string, unknown>[];
  let ensured: string[];
  /** What the caller may not do, as `verb resource/name`; the reviews the router asked for. */
  let denied: Set<string>;
  let reviews: string[];
  let script: (cell: string, seen: Seen) => Answer;
  let cellSet = spec;
  let options: RouterHandlerOptions;
  let tracing: ReturnType<typeof recordingTracer>;

  beforeEach(async () => {
    cellSet = spec;
    script = () => ({ code: 200, body: {} });
    cells = {};
    for (const id of ['a', 'b', 'control-plane']) cells[id] = await fakeApiserver((seen) => script(id, seen));
    registry = new Registry();
    ensured = [];
    denied = new Set();
    reviews = [];
    const { logger, lines } = memoryLogger();
    logLines = lines;
    tracing = recordingTracer();
    options = {
      authenticator: {
        authenticate: async (req) =>
          req.headers.authorization === 'Bearer alice'
            ? { user: { username: 'alice', groups: ['dev'], extra: {} } }
            : { failure: 'no credentials' },
      },
      controlPlane: cells['control-plane']!.client,
      cell: (id) => cells[id]?.client,
      state: () => routingState(cellSet, 7),
      oldCopies: new OldCopies({ client: (id) => cells[id]?.client }),
      promotions: new PromotionRequests({ logger }),
      reviewer: {
        allowed: async (user, attributes) => {
          const asked =
            'path' in attributes
              ? `${attributes.verb} ${attributes.path}`
              : `${attributes.verb} ${attributes.resource}${attributes.subresource === 'shard-by' ? ':shard-by' : ''}/${attributes.name ?? ''}`;
          reviews.push(`${user.username}: ${asked}`);
          return !denied.has(asked);
        },
      },
      cellNamespaces: {
        // As CellNamespaces does: a namespace is made for a caller only once it may write.
        ensure: async (cell, namespace, authorize) => {
          const refused = await authorize();
          if (!refused) ensured.push(`${cell}/${namespace}`);
          return refused;
        },
      },
      metrics: new RouterMetrics(registry),
      tracer: tracing.tracer,
      logger,
    };
    handler = new RouterHandler(options);
    front = createServer((request, response) => void handler.handle(request, response));
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    front.close();
    for (const cell of Object.values(cells)) {
      await cell.client.close();
      cell.server.close();
    }
  });

  /** Sends a request to the router; returns its status, headers and parsed body. */
  function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const { port } = front.address() as AddressInfo;
    return new Promise<{ code: number; headers: IncomingMessage['headers']; body: Body }>(
      (resolve, reject) => {
        const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            method,
            path,
            headers: {
              authorization: 'Bearer alice',
              'content-type': 'application/json',
              // DELETE bodies are not chunked by node's client: say how long the body is.
              ...(text === undefined ? {} : { 'content-length': String(Buffer.byteLength(text)) }),
              ...headers,
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => {
              const raw = Buffer.concat(chunks).toString();
              resolve({
                code: res.statusCode!,
                headers: res.headers,
                body: raw ? JSON.parse(raw) : undefined,
              });
            });
          },
        );
        req.on('error', reject);
        req.end(text);
      },
    );
  }

  const ownCells = () => Object.entries(cells).filter(([id]) => id !== 'control-plane');

  /** A ConfigMap name in namespace team whose key moves from cell a to b: the router reads its old copy. */
  function movingName(): string {
    const state = routingState(spec, 7);
    for (let i = 0; ; i++) {
      const decision = state.table.route(state.table.keyOf({ namespace: 'team', name: `cfg-${i}` }));
      if (decision.oldCell !== decision.newCell) return `cfg-${i}`;
    }
  }

  it('answers 429 Retry-After when the cell a request was planned with left meanwhile; 503 Retry-After when a live cell is not connected', async () => {
    const state = routingState(spec, 7);
    const staying = Array.from({ length: 100 }, (_, i) => `cfg-${i}`).find((name) => {
      const decision = state.table.route(state.table.keyOf({ namespace: 'team', name }));
      return decision.oldCell === 'a' && decision.newCell === 'a';
    })!;
    const withoutA = parseCellSetSpec({
      cells: [{ id: 'b', state: 'Normal', kubeconfigSecretRef: { name: 'b-kubeconfig' } }],
    });
    let plans = 0;
    // Planned with cell a; by the time the router looks for it, the CellSet no longer has it.
    options.state = () => routingState(plans++ === 0 ? spec : withoutA, 7 + Math.min(plans, 1));
    options.cell = (id) => (id === 'a' ? undefined : cells[id]?.client);
    const path = `/api/v1/namespaces/team/configmaps/${staying}`;
    const left = await send('PUT', path, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: staying },
    });
    expect(left.code).toBe(429);
    expect(left.headers['retry-after']).toBe('1');
    expect(left.body.message).toBe('cell a left the federation while the request was routed; retry');

    options.state = () => state;
    const unconnected = await send('GET', path);
    expect(unconnected.code).toBe(503);
    expect(unconnected.headers['retry-after']).toBe('1');
  });

  it('finds a Job its ring cell does not have where another cell’s CronJob made it, for reads and writes alike', async () => {
    const state = routingState(spec, 7);
    const name = Array.from({ length: 100 }, (_, i) => `nightly-${i}`).find((candidate) => {
      const decision = state.table.route(state.table.keyOf({ namespace: 'team', name: candidate }));
      return decision.oldCell === 'a' && decision.newCell === 'a';
    })!;
    const path = `/apis/batch/v1/namespaces/team/jobs/${name}`;
    const madeByCronJob = [
      { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'u', controller: true },
    ];
    let ownerReferences: unknown[] = madeByCronJob;
    const notFound = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 };
    script = (cell, seen) => {
      if (cell !== 'b' || !seen.url.startsWith(path)) return { code: 404, body: notFound };
      return { code: 200, body: { kind: 'Job', metadata: { name, namespace: 'team', ownerReferences } } };
    };

    const read = await send('GET', path);
    expect(read.code).toBe(200);
    expect(read.body.metadata.name).toBe(name);
    const deleted = await send('DELETE', path, { propagationPolicy: 'Background' });
    expect(deleted.code).toBe(200);
    expect(cells['b']!.seen.filter((seen) => seen.method === 'DELETE').map((seen) => seen.url)).toEqual([
      path,
    ]);
    // The ring cell was asked first, every time; a create never looks elsewhere.
    expect(cells['a']!.seen.filter((seen) => seen.url === path).map((seen) => seen.method)).toEqual(
      expect.arrayContaining(['GET', 'DELETE']),
    );

    // A copy in another cell that its cell did not make (a move's leftover) is not the object: 404.
    ownerReferences = [];
    const leftover = await send('GET', path);
    expect(leftover.code).toBe(404);
    expect(leftover.body).toMatchObject({ reason: 'NotFound' });
    // Nor is any other resource looked for elsewhere.
    cells['b']!.seen.length = 0;
    expect((await send('GET', `/apis/apps/v1/namespaces/team/deployments/${name}`)).code).toBe(404);
    expect(cells['b']!.seen).toEqual([]);
  });

  it('retries a generateName create whose picked name is taken, with a new name', async () => {
    const names: string[] = [];
    script = (_cell, seen) => {
      if (seen.method !== 'POST')
        return { code: 404, body: { kind: 'Status', reason: 'NotFound', code: 404 } };
      names.push(JSON.parse(seen.body).metadata.name);
      return names.length === 1
        ? { code: 409, body: alreadyExists }
        : { code: 201, body: JSON.parse(seen.body) };
    };
    const answer = await send('POST', '/api/v1/namespaces/team/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { generateName: 'cfg-' },
    });
    expect(answer).toMatchObject({ code: 201 });
    expect(names).toHaveLength(2);
    expect(names[0]).not.toBe(names[1]);
    expect(names.every((name) => /^cfg-[bcdfghjklmnpqrstvwxz2456789]{5}$/.test(name))).toBe(true);
    expect(answer.body.metadata.name).toBe(names[1]);
    expect(ensured.every((entry) => entry.endsWith('/team'))).toBe(true);
  });

  it('returns a conflict of a named create as it is, without retrying', async () => {
    script = (_cell, seen) =>
      seen.method === 'POST' ? { code: 409, body: alreadyExists } : { code: 404, body: {} };
    const answer = await send('POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: 'cfg' } });
    expect(answer).toMatchObject({ code: 409 });
    expect(
      ownCells()
        .flatMap(([, cell]) => cell.seen)
        .filter((seen) => seen.method === 'POST'),
    ).toHaveLength(1);
  });

  it('fences a write to a migrating object with 429 and Retry-After, and counts it', async () => {
    // Every name is in case 1-3 for some key; find one whose old copy the router must read.
    script = (_cell, seen) =>
      seen.method === 'GET'
        ? { code: 200, body: { metadata: { name: 'x', labels: { [REBALANCE_STATUS_LABEL]: MIGRATING } } } }
        : { code: 200, body: {} };
    const name = movingName();
    const answer = await send('PUT', `/api/v1/namespaces/team/configmaps/${name}`, { metadata: { name } });
    expect(answer).toMatchObject({ code: 429 });
    expect(answer.headers['retry-after']).toBeDefined();
    expect(answer.body).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', details: { name } });
    expect(
      await metricValue(registry, 'cellfed_router_fenced_writes_total', { resource: '/configmaps' }),
    ).toBe(1);
    // A read of the same object goes to the old cell.
    const read = await send('GET', `/api/v1/namespaces/team/configmaps/${name}`);
    expect(read).toMatchObject({ code: 200 });
    expect(
      cells.a!.seen.some(
        (seen) =>
          seen.method === 'GET' &&
          seen.url.includes(name) &&
          !seen.headers.accept?.includes('PartialObjectMetadata'),
      ),
    ).toBe(true);
  });

  it('tells a caller who may not write an object nothing of its move, and makes nothing for it: the 403 one apiserver gives', async () => {
    script = (_cell, seen) =>
      seen.method === 'GET'
        ? { code: 200, body: { metadata: { name: 'x', labels: { [REBALANCE_STATUS_LABEL]: MIGRATING } } } }
        : { code: 200, body: {} };
    const name = movingName();
    denied.add(`update configmaps/${name}`);
    const answer = await send('PUT', `/api/v1/namespaces/team/configmaps/${name}`, { metadata: { name } });
    expect(answer).toMatchObject({ code: 403, body: { reason: 'Forbidden' } });
    expect(answer.body.message).toBe(
      `configmaps "${name}" is forbidden: User "alice" cannot update resource "configmaps" in API group "" in the namespace "team"`,
    );
    expect(answer.headers['retry-after']).toBeUndefined();
    expect(reviews).toEqual([`alice: update configmaps/${name}`]);

    // A key that does not move: the namespace the write needs is not made in the cell for this caller.
    const staying = 'cfg-staying';
    denied.add(`update configmaps/${staying}`);
    script = () => ({ code: 200, body: { metadata: { name: staying } } });
    const settled = cellSet;
    cellSet = parseCellSetSpec({
      cells: [{ id: 'a', state: 'Normal', kubeconfigSecretRef: { name: 'a-kubeconfig' } }],
    });
    const write = await send('PUT', `/api/v1/namespaces/team/configmaps/${staying}`, {
      metadata: { name: staying },
    });
    cellSet = settled;
    expect(write.code).toBe(403);
    expect(ensured).toEqual([]);
    expect(cells.a!.seen.filter((seen) => seen.method === 'PUT')).toEqual([]);
  });

  describe('a write the cell refuses', () => {
    const refusal = (message: string) => ({
      code: 403,
      body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message },
    });
    const fenceMessage =
      `ValidatingAdmissionPolicy 'cellfed-rebalance-fence' with binding 'cellfed-rebalance-fence' denied ` +
      `request: configmaps "cfg" is migrated to another cell: this copy takes no writes`;

    it('answers the fence (429, Retry-After) when the cell’s fence policy refused it: the move began after the router read the label', async () => {
      // The label read says "not started", so the write goes to the old copy; by the time the cell applies
      // it the copy is migrated, and the cell's policy refuses it.
      script = (_cell, seen) =>
        seen.method === 'GET' ? { code: 200, body: { metadata: { name: 'x' } } } : refusal(fenceMessage);
      const name = movingName();
      const answer = await send(
        'PATCH',
        `/api/v1/namespaces/team/configmaps/${name}`,
        { data: { a: '1' } },
        {
          'content-type': 'application/merge-patch+json',
        },
      );
      expect(answer).toMatchObject({ code: 429, headers: { 'retry-after': '1' } });
      expect(answer.body).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', details: { name } });
      expect(cells.a!.seen.filter((seen) => seen.method === 'PATCH')).toHaveLength(1);
      expect(logLines.find((line) => line['name'] === name)).toMatchObject({
        code: 429,
        route: 'cell-fence',
        cell: 'a',
      });
      expect(
        await metricValue(registry, 'cellfed_router_fenced_writes_total', { resource: '/configmaps' }),
      ).toBe(1);
    });

    it('passes any other 403 on as it is', async () => {
      const rbac = 'configmaps "cfg" is forbidden: User "alice" cannot patch resource "configmaps"';
      script = (_cell, seen) =>
        seen.method === 'GET' ? { code: 200, body: { metadata: { name: 'x' } } } : refusal(rbac);
      const answer = await send('DELETE', `/api/v1/namespaces/team/configmaps/${movingName()}`);
      expect(answer).toMatchObject({ code: 403, body: { kind: 'Status', message: rbac } });
      expect(
        (await metricValue(registry, 'cellfed_router_fenced_writes_total', { resource: '/configmaps' })) ?? 0,
      ).toBe(0);
    });
  });

  it('fans deletecollection out to every live cell as the caller and merges the deleted items', async () => {
    script = (cell) => ({
      code: 200,
      body: {
        kind: 'ConfigMapList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '9' },
        items: [{ metadata: { name: `in-${cell}` } }],
      },
    });
    const answer = await send('DELETE', '/api/v1/namespaces/team/configmaps?labelSelector=app%3Dweb', {
      propagationPolicy: 'Background',
    });
    expect(answer).toMatchObject({ code: 200 });
    // The control plane deletes only what it made for itself (its kube-root-ca.crt), as one apiserver would.
    expect(answer.body.items.map((item) => item.metadata.name).sort()).toEqual([
      'in-a',
      'in-b',
      'in-control-plane',
    ]);
    expect(cells['control-plane']!.seen[0]).toMatchObject({
      method: 'DELETE',
      url: '/api/v1/namespaces/team/configmaps?labelSelector=app%3Dweb%2C%21cellfed.io%2Ffollowed-from&fieldSelector=metadata.name%3Dkube-root-ca.crt',
    });
    expect(answer.body.metadata).toEqual({});
    for (const [, cell] of ownCells()) {
      expect(cell.seen[0]).toMatchObject({
        method: 'DELETE',
        // Never a cell's follower copies (see without-followers.ts), nor its own kube-root-ca.crt.
        url: '/api/v1/namespaces/team/configmaps?labelSelector=app%3Dweb%2C%21cellfed.io%2Ffollowed-from&fieldSelector=metadata.name%21%3Dkube-root-ca.crt',
      });
      expect(cell.seen[0]!.headers['impersonate-user']).toBe('alice');
      expect(JSON.parse(cell.seen[0]!.body)).toEqual({ propagationPolicy: 'Background' });
    }
  });

  it('answers a failed cell of a deletecollection with its Status, naming the cell', async () => {
    script = (cell) =>
      cell === 'b'
        ? {
            code: 403,
            body: { kind: 'Status', reason: 'Forbidden', code: 403, message: 'alice cannot delete' },
          }
        : { code: 200, body: { kind: 'ConfigMapList', items: [] } };
    const answer = await send('DELETE', '/api/v1/namespaces/team/configmaps');
    expect(answer).toMatchObject({ code: 403 });
    expect(answer.body.message).toBe('cell b: alice cannot delete (deleted in the control plane, a)');
  });

  it('answers bad requests with a Status and logs one line per request with the cell and object', async () => {
    expect(
      (await send('GET', '/api/v1/pods', undefined, { authorization: 'Bearer mallory' })).body,
    ).toMatchObject({
      kind: 'Status',
      code: 401,
    });
    const bad = await send('POST', '/api/v1/namespaces/team/configmaps', '{"metadata":');
    expect(bad.body).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    const nameless = await send('POST', '/api/v1/namespaces/team/configmaps', { kind: 'ConfigMap' });
    expect(nameless.body).toMatchObject({ kind: 'Status', code: 422, reason: 'Invalid' });
    const huge = await send('POST', '/api/v1/namespaces/team/configmaps', 'x'.repeat(3 * 1024 * 1024 + 1));
    expect(huge.body).toMatchObject({ kind: 'Status', code: 413 });
    const badEscape = await send('PUT', '/%zz/namespaces', 'x');
    expect(badEscape.body).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    expect(badEscape.body.message).toContain('does not start an escape');
    const requests = logLines.filter((line) => line.msg === 'request');
    expect(requests.map((line) => line.code)).toEqual([401, 400, 422, 413, 400]);
    expect(requests[1]).toMatchObject({
      verb: 'create',
      resource: 'configmaps',
      namespace: 'team',
      route: 'bad-body',
    });
    expect(
      await metricValue(registry, 'cellfed_router_requests_total', { verb: 'create', code: '413' }),
    ).toBe(1);
  });

  it('answers an update of a whole collection with 405, without asking a cell', async () => {
    const answer = await send('PUT', '/api/v1/namespaces/team/configmaps', { items: [] });
    expect(answer).toMatchObject({ code: 405, body: { kind: 'Status', reason: 'MethodNotAllowed' } });
    expect(Object.values(cells).flatMap((cell) => cell.seen)).toEqual([]);
  });

  it("makes a span per request with the routing decision, parented to the caller's trace, and sends its traceparent to the cell", async () => {
    script = () => ({ code: 200, body: { metadata: { name: 'web' } } });
    const caller = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const answer = await send('GET', '/apis/apps/v1/namespaces/team/deployments/web', undefined, {
      traceparent: caller,
    });
    expect(answer.code).toBe(200);
    const [span] = tracing.spans();
    expect(span).toBeDefined();
    const cell = span!.attributes['cellfed.cell'] as string;
    expect(['a', 'b']).toContain(cell);
    expect(span!.name).toBe('get deployments');
    expect(span!.kind).toBe(SpanKind.SERVER);
    expect(span!.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.response.status_code': 200,
      'k8s.namespace.name': 'team',
      'k8s.object.name': 'web',
      'enduser.id': 'alice',
    });
    expect(span!.attributes['cellfed.route']).toEqual(expect.any(String));
    expect(span!.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(span!.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    // The cell's request is the router span's child: same trace, the router's span as parent.
    const { traceId, spanId } = span!.spanContext();
    expect(cells[cell]!.seen.at(-1)!.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });

  it('marks the span of an answer the router gives itself, and of a 5xx, with its code', async () => {
    await send('PUT', '/apis/apps/v1/namespaces/team/deployments', {});
    script = () => ({ code: 503, body: { kind: 'Status', code: 503 } });
    await send('GET', '/api/v1/namespaces/team/configmaps/x');
    const [refused, failed] = tracing.spans();
    expect(refused!.attributes).toMatchObject({
      'http.response.status_code': 405,
      'cellfed.route': 'bad-verb',
    });
    expect(refused!.status.code).toBe(SpanStatusCode.UNSET);
    expect(failed!.attributes['http.response.status_code']).toBe(503);
    expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
  });

  it("passes a caller's traceparent through unchanged when tracing is off", async () => {
    handler = new RouterHandler({ ...options, tracer: undefined });
    script = () => ({ code: 200, body: { metadata: { name: 'x' } } });
    const caller = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    await send('GET', '/api/v1/namespaces/team/configmaps/x', undefined, { traceparent: caller });
    const seen = ownCells().flatMap(([, fake]) => fake.seen);
    // The old copy's metadata read is the router's own; the forwarded request carries the caller's header.
    expect(seen.map((one) => one.headers.traceparent).filter(Boolean)).toEqual([caller]);
    expect(tracing.spans()).toHaveLength(0);
  });

  it('passes an apiserver’s error on as a Status when it came as plain text, and a Status as it is', async () => {
    script = (_cell, seen) =>
      seen.url.startsWith('/nowhere')
        ? { code: 404, body: '404 page not found\n', type: 'text/plain; charset=utf-8' }
        : { code: 409, body: { kind: 'Status', code: 409, reason: 'AlreadyExists', message: 'taken' } };
    const text = await send('GET', '/nowhere/at/all');
    expect(text.code).toBe(404);
    expect(text.headers['content-type']).toBe('application/json');
    expect(text.body).toMatchObject({
      kind: 'Status',
      code: 404,
      reason: 'NotFound',
      message: '404 page not found',
    });
    const status = await send('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view');
    expect(status).toMatchObject({ code: 409, body: { reason: 'AlreadyExists', message: 'taken' } });
  });

  it('sends a path on exactly as it came: the apiserver must read the object the router routed', async () => {
    // Read as kube-apiserver reads it: a clusterrole named "..", subresource "x" (a URL would make it
    // /apis/rbac.authorization.k8s.io/v1/x).
    const path = '/apis/rbac.authorization.k8s.io/v1/clusterroles/../x?dryRun=All';
    expect(await send('GET', path)).toMatchObject({ code: 200 });
    expect(cells['control-plane']!.seen.map((seen) => seen.url)).toEqual([path]);
  });

  it('asks a right of its own before a namespace write that re-keys its objects (cellfed.io/shard-by)', async () => {
    const path = '/api/v1/namespaces/team';
    const patch = (labels: Record<string, string | null>) =>
      send('PATCH', path, { metadata: { labels } }, { 'content-type': 'application/merge-patch+json' });
    denied.add('update namespaces:shard-by/team');
    const refused = await patch({ 'cellfed.io/shard-by': 'name' });
    expect(refused).toMatchObject({ code: 403, body: { reason: 'Forbidden' } });
    expect(refused.body.message).toContain('cannot update resource "namespaces/shard-by"');
    expect(cells['control-plane']!.seen).toEqual([]);
    // Other labels need no more than the control plane's own check; with the right, the label goes too.
    expect(await patch({ team: 'a' })).toMatchObject({ code: 200 });
    denied.clear();
    expect(await patch({ 'cellfed.io/shard-by': 'name' })).toMatchObject({ code: 200 });
    expect(cells['control-plane']!.seen.map((seen) => JSON.parse(seen.body))).toEqual([
      { metadata: { labels: { team: 'a' } } },
      { metadata: { labels: { 'cellfed.io/shard-by': 'name' } } },
    ]);
  });

  it("serves no caller as a name cellfed's components call the cells as, its own or impersonated", async () => {
    const authenticate = options.authenticator.authenticate;
    handler = new RouterHandler({
      ...options,
      componentUsers: new Set(['cellfed-backup-controller']),
      authenticator: {
        authenticate: async (req) =>
          req.headers.authorization === 'Bearer minted'
            ? { user: { username: 'cellfed-backup-controller', groups: ['system:authenticated'], extra: {} } }
            : authenticate(req),
      },
    });
    const path = '/apis/rbac.authorization.k8s.io/v1/clusterroles/view';
    const asCaller = await send('GET', path, undefined, { authorization: 'Bearer minted' });
    expect(asCaller).toMatchObject({ code: 403, body: { kind: 'Status', reason: 'Forbidden' } });
    expect(asCaller.body.message).toContain(
      'User "cellfed-backup-controller" is a name cellfed\'s components',
    );
    expect(reviews).toEqual([]);
    // Impersonated: refused once allowed, and only then, so the name tells no one without the right anything.
    const impersonating = { 'impersonate-user': 'cellfed-backup-controller' };
    denied.add('impersonate users/cellfed-backup-controller');
    const notAllowed = await send('GET', path, undefined, impersonating);
    expect(notAllowed).toMatchObject({ code: 403 });
    expect(notAllowed.body.message).toContain('cannot impersonate resource "users"');
    denied.clear();
    const allowed = await send('GET', path, undefined, impersonating);
    expect(allowed).toMatchObject({ code: 403 });
    expect(allowed.body.message).toContain(
      'User "cellfed-backup-controller" is a name cellfed\'s components',
    );
    expect(reviews).toEqual([
      'alice: impersonate users/cellfed-backup-controller',
      'alice: impersonate users/cellfed-backup-controller',
    ]);
    for (const cell of Object.values(cells)) expect(cell.seen).toEqual([]);
    // Anyone else is served as before.
    expect(await send('GET', path, undefined, { 'impersonate-user': 'bob' })).toMatchObject({ code: 200 });
    expect(cells['control-plane']!.seen.map((seen) => seen.headers['impersonate-user'])).toEqual(['bob']);
  });

  it('sends global resources to the control plane as the caller', async () => {
    const answer = await send('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view');
    expect(answer).toMatchObject({ code: 200 });
    const seen = cells['control-plane']!.seen[0]!;
    expect(seen.url).toBe('/apis/rbac.authorization.k8s.io/v1/clusterroles/view');
    expect(seen.headers.authorization).toBe('Bearer router-token');
    expect(seen.headers['impersonate-user']).toBe('alice');
    expect(seen.headers['impersonate-group']).toBe('dev');
  });

  it('serves HTTP/2 streams too: a body without content-length is forwarded, pseudo-headers are not', async () => {
    script = (_cell, seen) => ({ code: 201, body: JSON.parse(seen.body || '{}') });
    const h2 = createHttp2Server(handler.handle);
    await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
    const session = http2Connect(`http://127.0.0.1:${(h2.address() as AddressInfo).port}`);
    try {
      const stream = session.request({
        ':method': 'POST',
        ':path': '/api/v1/namespaces/team/configmaps',
        authorization: 'Bearer alice',
        'content-type': 'application/json',
      });
      stream.end(JSON.stringify({ metadata: { name: 'over-h2' }, data: { a: 'b' } }));
      const [status, text] = await new Promise<[number, string]>((resolve) => {
        let code = 0;
        let body = '';
        stream.on('response', (headers) => (code = Number(headers[':status'])));
        stream.on('data', (chunk: Buffer) => (body += chunk.toString()));
        stream.on('end', () => resolve([code, body]));
      });
      expect(status).toBe(201);
      expect(JSON.parse(text)).toMatchObject({ metadata: { name: 'over-h2' } });
      const seen = ownCells().flatMap(([, cell]) => cell.seen)[0]!;
      expect(JSON.parse(seen.body)).toEqual({ metadata: { name: 'over-h2' }, data: { a: 'b' } });
      expect(Object.keys(seen.headers).some((name) => name.startsWith(':'))).toBe(false);
    } finally {
      session.close();
      h2.close();
    }
  });

  it('keeps an HTTP/2 connection flowing when it refuses requests without reading their bodies', async () => {
    const h2 = createHttp2Server((request, response) => void handler.handle(request, response));
    await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
    const session = http2Connect(`http://127.0.0.1:${(h2.address() as AddressInfo).port}`);
    const post = () =>
      new Promise<number>((resolve, reject) => {
        // Refused at once (no credentials): the router answers before the body has arrived.
        const stream = session.request({ ':method': 'POST', ':path': '/api/v1/namespaces/team/configmaps' });
        stream.on('response', (headers) => resolve(Number(headers[':status'])));
        stream.on('error', reject);
        stream.end(Buffer.alloc(256 * 1024, 0x61));
      });
    try {
      // 40 × 256 KiB is far over HTTP/2's default 64 KiB connection window: unread bodies would stall it.
      const codes: number[] = [];
      for (let i = 0; i < 40; i++) codes.push(await post());
      expect(codes).toEqual(Array.from({ length: 40 }, () => 401));
    } finally {
      // The refused uploads are still open on the client's side: end them with the session.
      session.destroy();
      h2.close();
    }
  }, 20_000);

  describe('a key whose cell is Down', () => {
    const downSpec = parseCellSetSpec({
      cells: [
        { id: 'a', state: 'Normal', kubeconfigSecretRef: { name: 'a-kubeconfig' } },
        { id: 'b', state: 'Normal', kubeconfigSecretRef: { name: 'b-kubeconfig' } },
        { id: 'c', state: 'Down', kubeconfigSecretRef: { name: 'c-kubeconfig' } },
      ],
    });
    /** The CellBackup of ConfigMap `name` in `target` whose primary was `down`; `data` what it holds. */
    const backupOf = (
      target: string,
      down: string,
      name: string,
      annotations: Record<string, string> = {},
      data = JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'team' },
        data: { k: 'v' },
      }),
      holds = name,
    ) => ({
      metadata: {
        labels: { [BACKUP_CELL_LABEL]: target, [PRIMARY_CELL_LABEL]: down },
        annotations: {
          [BACKUP_SOURCE_ANNOTATION]: formatObjectKey({
            resource: { group: '', version: 'v1', resource: 'configmaps' },
            namespace: 'team',
            name: holds,
          }),
          ...annotations,
        },
      },
      spec: { data },
    });
    /** A ConfigMap name whose key belonged to the Down cell, and the cell that took it over. */
    const failedOver = () => {
      const state = routingState(downSpec, 7);
      for (let i = 0; ; i++) {
        const key = state.table.keyOf({ namespace: 'team', name: `cfg-${i}` });
        if (state.table.failedOverFrom(key) === 'c')
          return { name: `cfg-${i}`, target: state.table.route(key).oldCell };
      }
    };
    const isBackupRead = (seen: Seen) => seen.url.includes('/cellbackups/');

    beforeEach(() => {
      cellSet = downSpec;
    });

    it('serves nothing from a backup at the key’s name that holds another object’s key (a collision forced)', async () => {
      const { name, target } = failedOver();
      const other = JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'team' },
      });
      script = (_cell, seen) =>
        isBackupRead(seen)
          ? { code: 200, body: backupOf(target, 'c', name, {}, other, 'victim') }
          : { code: 404, body: { kind: 'Status', code: 404 } };
      const answer = await send('GET', `/api/v1/namespaces/team/configmaps/${name}`);
      expect(answer).toMatchObject({ code: 500, body: { reason: 'InternalError' } });
      expect(answer.body.message).toContain('cannot be read');
    });

    it('serves reads from the backup until it is promoted, once the cell says the caller may read', async () => {
      const { name, target } = failedOver();
      script = (_cell, seen) =>
        isBackupRead(seen)
          ? { code: 200, body: backupOf(target, 'c', name) }
          : { code: 404, body: { kind: 'Status', code: 404 } };
      const answer = await send('GET', `/api/v1/namespaces/team/configmaps/${name}`);
      expect(answer).toMatchObject({ code: 200, body: { kind: 'ConfigMap', data: { k: 'v' } } });
      const seen = cells[target]!.seen;
      // The cell was asked for the real object as the caller, then the router read the backup as itself.
      expect(seen[0]!.headers['impersonate-user']).toBe('alice');
      expect(isBackupRead(seen[1]!)).toBe(true);
      expect(seen[1]!.headers['impersonate-user']).toBeUndefined();
      expect(logLines.some((line) => line.route === 'failover-backup' && line.cell === target)).toBe(true);
    });

    it('answers writes 429 until the promotion is committed, then sends them to the cell', async () => {
      const { name, target } = failedOver();
      let stage: 'backup' | 'created' | 'committed' = 'backup';
      script = (_cell, seen) => {
        if (isBackupRead(seen))
          return stage === 'backup'
            ? { code: 200, body: backupOf(target, 'c', name) }
            : { code: 404, body: {} };
        if (seen.method !== 'GET') return { code: 200, body: { metadata: { name } } };
        if (stage === 'backup') return { code: 404, body: {} };
        // Created from the backup, its field managers not written back yet: marked until then.
        const annotations = stage === 'created' ? { [PROMOTED_FROM_ANNOTATION]: 'c' } : {};
        return { code: 200, body: { kind: 'ConfigMap', metadata: { name, annotations }, data: { k: 'v' } } };
      };
      const put = () => send('PUT', `/api/v1/namespaces/team/configmaps/${name}`, { metadata: { name } });
      const puts = () => cells[target]!.seen.filter((seen) => seen.method === 'PUT');

      const fenced = await put();
      expect(fenced).toMatchObject({ code: 429, body: { reason: 'TooManyRequests' } });
      expect(fenced.headers['retry-after']).toBe('1');
      expect(fenced.body.message).toContain('restored');
      expect(puts()).toEqual([]);

      stage = 'created';
      expect(await put()).toMatchObject({ code: 429, body: { reason: 'TooManyRequests' } });
      expect(puts()).toEqual([]);
      // Reads go to the real object meanwhile, and never show the mark.
      const read = await send('GET', `/api/v1/namespaces/team/configmaps/${name}`);
      expect(read).toMatchObject({ code: 200, body: { data: { k: 'v' } } });
      expect(JSON.stringify(read.body)).not.toContain(PROMOTED_FROM_ANNOTATION);

      stage = 'committed';
      expect(await put()).toMatchObject({ code: 200 });
      expect(puts()).toHaveLength(1);
    });

    it('asks, as itself, for the promotion of a key an allowed writer waits on, once; never for another caller', async () => {
      const { name, target } = failedOver();
      script = (_cell, seen) => {
        if (!isBackupRead(seen)) return { code: 404, body: { kind: 'Status', code: 404 } };
        return seen.method === 'PATCH'
          ? { code: 200, body: {} }
          : { code: 200, body: backupOf(target, 'c', name) };
      };
      const path = `/api/v1/namespaces/team/configmaps/${name}`;
      const asked = () =>
        Object.values(cells).flatMap((cell) => cell.seen.filter((seen) => seen.method === 'PATCH'));
      const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

      denied.add(`update configmaps/${name}`);
      expect(await send('PUT', path, { metadata: { name } })).toMatchObject({ code: 403 });
      await settle();
      expect(asked()).toEqual([]);

      denied.clear();
      expect(await send('PUT', path, { metadata: { name } })).toMatchObject({ code: 429 });
      await settle();
      expect(asked()).toHaveLength(1);
      const [request] = asked();
      const backup = cellBackupName({
        resource: { group: '', version: 'v1', resource: 'configmaps' },
        namespace: 'team',
        name,
      });
      expect(request!.url).toBe(
        `/apis/cells.cellfed.io/v1alpha1/namespaces/cellfed-backups/cellbackups/${backup}`,
      );
      expect(cells[target]!.seen).toContain(request);
      expect(request!.headers['impersonate-user']).toBeUndefined();
      expect(request!.headers['content-type']).toBe('application/merge-patch+json');
      expect(JSON.parse(request!.body)).toEqual({
        metadata: { annotations: { [PROMOTION_REQUESTED_ANNOTATION]: expect.any(String) } },
      });
      // Clients retry every second: asked once, however many retries and reads come meanwhile.
      expect(await send('PATCH', path, {}, { 'content-type': 'application/merge-patch+json' })).toMatchObject(
        {
          code: 429,
        },
      );
      expect(await send('GET', path)).toMatchObject({ code: 200 });
      await settle();
      expect(asked()).toHaveLength(1);
    });

    it('asks nothing for a backup a router marked already, nor for a read it refuses until the promotion', async () => {
      const { name, target } = failedOver();
      let marked = true;
      script = (_cell, seen) => {
        if (!isBackupRead(seen)) return { code: 404, body: { kind: 'Status', code: 404 } };
        const annotations: Record<string, string> = marked
          ? { [PROMOTION_REQUESTED_ANNOTATION]: 'then' }
          : {};
        return { code: 200, body: backupOf(target, 'c', name, annotations) };
      };
      const path = `/api/v1/namespaces/team/configmaps/${name}`;
      const asked = () => cells[target]!.seen.filter((seen) => seen.method === 'PATCH');
      expect(await send('PUT', path, { metadata: { name } })).toMatchObject({ code: 429 });
      marked = false;
      // A read of a subresource is refused until the promotion too, but asks for nothing.
      expect(await send('GET', `${path}/proxy`)).toMatchObject({ code: 429 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(asked()).toEqual([]);
    });

    it('answers 500 for a backup that holds nothing of this name to read, and asks for nothing', async () => {
      const { name, target } = failedOver();
      for (const data of [
        '{"truncated": ',
        JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'other' } }),
      ]) {
        script = (_cell, seen) =>
          isBackupRead(seen)
            ? { code: 200, body: backupOf(target, 'c', name, {}, data) }
            : { code: 404, body: { kind: 'Status', code: 404 } };
        const read = await send('GET', `/api/v1/namespaces/team/configmaps/${name}`);
        expect(read).toMatchObject({ code: 500, body: { kind: 'Status', reason: 'InternalError' } });
        expect(read.body.message).toContain('cannot be read');
        expect(
          await send('PUT', `/api/v1/namespaces/team/configmaps/${name}`, { metadata: { name } }),
        ).toMatchObject({
          code: 500,
        });
      }
      expect(cells[target]!.seen.filter((seen) => seen.method === 'PATCH')).toEqual([]);
    });

    it('relays the cell’s refusal to a caller who may not read the object, and never reads the backup', async () => {
      const { name, target } = failedOver();
      script = () => ({ code: 403, body: { kind: 'Status', reason: 'Forbidden', code: 403, message: 'no' } });
      const answer = await send('GET', `/api/v1/namespaces/team/configmaps/${name}`);
      expect(answer).toMatchObject({ code: 403, body: { reason: 'Forbidden' } });
      expect(cells[target]!.seen.some(isBackupRead)).toBe(false);
    });

    describe('while a cell joins', () => {
      const joiningSpec = parseCellSetSpec({
        cells: [
          { id: 'a', state: 'Normal', kubeconfigSecretRef: { name: 'a-kubeconfig' } },
          { id: 'b', state: 'Joining', kubeconfigSecretRef: { name: 'b-kubeconfig' } },
          { id: 'c', state: 'Down', kubeconfigSecretRef: { name: 'c-kubeconfig' } },
        ],
      });
      /** A ConfigMap of the Down cell whose key the rebalance moves on from the cell that took it over. */
      const movingOn = () => {
        const state = routingState(joiningSpec, 8);
        for (let i = 0; ; i++) {
          const key = state.table.keyOf({ namespace: 'team', name: `cfg-${i}` });
          const { oldCell, newCell } = state.table.route(key);
          if (state.table.failedOverFrom(key) === 'c' && oldCell === 'a' && newCell === 'b')
            return `cfg-${i}`;
        }
      };

      beforeEach(() => {
        cellSet = joiningSpec;
      });

      it('serves the backup in the old cell, where it is promoted, not the new cell’s 404', async () => {
        const name = movingOn();
        script = (cell, seen) =>
          cell === 'a' && isBackupRead(seen)
            ? { code: 200, body: backupOf('a', 'c', name) }
            : { code: 404, body: { kind: 'Status', code: 404 } };
        const read = await send('GET', `/api/v1/namespaces/team/configmaps/${name}`);
        expect(read).toMatchObject({ code: 200, body: { kind: 'ConfigMap', data: { k: 'v' } } });
        const write = await send('PUT', `/api/v1/namespaces/team/configmaps/${name}`, { metadata: { name } });
        expect(write).toMatchObject({ code: 429, body: { reason: 'TooManyRequests' } });
        // Nothing was written in the joining cell, where a create would make a second object of the key.
        expect(cells['b']!.seen.filter((seen) => seen.method !== 'GET')).toEqual([]);
      });

      it('sends the key to the new cell once the old cell holds neither it nor its backup (moved on)', async () => {
        const name = movingOn();
        script = (cell, seen) =>
          cell === 'b' && !isBackupRead(seen)
            ? { code: 200, body: { kind: 'ConfigMap', metadata: { name }, data: { k: 'moved' } } }
            : { code: 404, body: { kind: 'Status', code: 404 } };
        const read = await send('GET', `/api/v1/namespaces/team/configmaps/${name}`);
        expect(read).toMatchObject({ code: 200, body: { data: { k: 'moved' } } });
      });
    });

    it('ignores a backup that names another primary cell', async () => {
      const { name, target } = failedOver();
      script = (_cell, seen) =>
        isBackupRead(seen)
          ? { code: 200, body: backupOf(target, 'a', name) }
          : { code: 404, body: { kind: 'Status', code: 404 } };
      const answer = await send('GET', `/api/v1/namespaces/team/configmaps/${name}`);
      expect(answer.code).toBe(404);
    });
  });
});
