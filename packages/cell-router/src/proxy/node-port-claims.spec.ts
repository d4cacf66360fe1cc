import { ApiError, type KubeClient } from '@cellfed/controller-kit';
import {
  NODE_PORT_CLAIM_LABEL,
  NODE_PORTS_CLAIMED_AT_ANNOTATION,
  NODE_PORTS_OF_ANNOTATION,
} from '@cellfed/api';
import { nodePortClaimRef, type Service } from '@cellfed/federation';
import type { Dispatcher } from 'undici';

import { readProtobufService } from '../request/protobuf-service.ts';
import { parseRequestInfo, type ResourceRequestInfo } from '../request/request-info.ts';
import { refusal } from '../routing/destination.ts';
import { forbidden } from '../status/kube-status.ts';
import { protobufService } from '../testing/protobuf-item.ts';
import { NodePortClaims, type ServiceWrite } from './node-port-claims.ts';

/**
 * The control plane's Services and its node-port allocator, as far as claims use them: a port is held by
 * one Service; one asked for that another holds is refused in kube-apiserver's words; an unset one is the
 * lowest free.
 */
function fakeControlPlane() {
  const services = new Map<string, Service>();
  const calls: string[] = [];
  let uids = 0;
  const holder = (port: number) =>
    [...services.entries()].find(([, s]) => s.spec?.ports?.some((p) => p.nodePort === port))?.[0];
  const keyOf = (path: string) => {
    const [, namespace, name] = /namespaces\/([^/]+)\/services\/?([^/?]*)/.exec(path) ?? [];
    return { namespace: namespace!, name: name ?? '' };
  };
  const write = (method: string, path: string, body: Service) => {
    const { namespace } = keyOf(path);
    const name = body.metadata.name!;
    const key = `${namespace}/${name}`;
    const dryRun = path.includes('dryRun=All');
    const ports = (body.spec?.ports ?? []).map((port) => ({ ...port }));
    for (const [index, port] of ports.entries()) {
      if (!port.nodePort) continue;
      const held = holder(port.nodePort);
      if (held !== undefined && held !== key)
        return {
          code: 422,
          body: {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'Invalid',
            code: 422,
            message: `Service "${name}" is invalid: spec.ports[${index}].nodePort: Invalid value: ${port.nodePort}: provided port is already allocated`,
          },
        };
    }
    const taken = new Set(ports.map((port) => port.nodePort).filter(Boolean));
    for (const port of ports) {
      if (port.nodePort) continue;
      let free = 30000;
      while (holder(free) !== undefined || taken.has(free)) free++;
      port.nodePort = free;
      taken.add(free);
    }
    const existing = services.get(key);
    if (method === 'POST' && existing)
      return { code: 409, body: { kind: 'Status', code: 409, reason: 'AlreadyExists' } };
    if (method === 'PUT' && existing?.metadata.resourceVersion !== body.metadata.resourceVersion)
      return { code: 409, body: { kind: 'Status', code: 409, reason: 'Conflict' } };
    const stored: Service = {
      ...body,
      metadata: {
        ...body.metadata,
        namespace,
        uid: existing?.metadata.uid ?? `uid-${++uids}`,
        resourceVersion: String(Number(existing?.metadata.resourceVersion ?? 0) + 1),
      },
      spec: { ...body.spec, ports },
    };
    if (!dryRun) services.set(key, stored);
    return { code: method === 'POST' ? 201 : 200, body: stored };
  };
  const client = {
    raw: (method: string, path: string, options: { body: string }) => {
      calls.push(`${method} ${path}`);
      const answer = write(method, path, JSON.parse(options.body) as Service);
      const text = JSON.stringify(answer.body);
      return Promise.resolve({ statusCode: answer.code, body: { text: () => Promise.resolve(text) } });
    },
    request: (method: string, path: string, options: { body?: unknown } = {}) => {
      calls.push(`${method} ${path}`);
      const { namespace, name } = keyOf(path);
      const key = `${namespace}/${name}`;
      const found = services.get(key);
      if (!found) return Promise.reject(new ApiError(404, { reason: 'NotFound' }, method));
      if (method === 'GET') return Promise.resolve(structuredClone(found));
      if (method === 'DELETE') {
        const { uid, resourceVersion } =
          (options.body as { preconditions?: { uid?: string; resourceVersion?: string } }).preconditions ??
          {};
        if (
          uid !== found.metadata.uid ||
          (resourceVersion && resourceVersion !== found.metadata.resourceVersion)
        )
          return Promise.reject(new ApiError(409, { reason: 'Conflict' }, method));
        services.delete(key);
        return Promise.resolve({});
      }
      if (method === 'PUT') {
        const answer = write('PUT', path, options.body as Service);
        return answer.code < 300
          ? Promise.resolve(answer.body)
          : Promise.reject(new ApiError(answer.code, {}, method));
      }
      throw new Error(`unexpected ${method}`);
    },
  } as unknown as KubeClient;
  return { client, services, calls, holder };
}

const SERVICE_PATH = '/api/v1/namespaces/shop/services';
const CLAIMS_NAMESPACE = 'cellfed-system';
/** The fake control plane's key of the claim of shop/`name`. */
const claimKey = (name: string) =>
  `${CLAIMS_NAMESPACE}/${nodePortClaimRef(CLAIMS_NAMESPACE, { namespace: 'shop', name }).name}`;
const allow = () => Promise.resolve(undefined);
const deny = () => Promise.resolve(refusal(forbidden('services "web" is forbidden'), 'forbidden'));

function service(name: string, spec: Service['spec']): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec };
}

function answer(code: number, body: unknown): Dispatcher.ResponseData {
  return {
    statusCode: code,
    headers: {},
    body: { json: () => Promise.resolve(body), dump: () => Promise.resolve() },
  } as unknown as Dispatcher.ResponseData;
}

function setup() {
  const plane = fakeControlPlane();
  const claims = new NodePortClaims(plane.client, CLAIMS_NAMESPACE);
  const authorized: string[] = [];
  let allowed = true;
  let dryRuns = 0;
  const writeOf = (
    method: 'POST' | 'PUT' | 'PATCH',
    name: string,
    body: unknown,
    options: {
      contentType?: string;
      dryRunResult?: Service | { kind: 'Status'; code: number };
      query?: string;
    } = {},
  ): ServiceWrite => {
    const url =
      method === 'POST'
        ? `${SERVICE_PATH}${options.query ?? ''}`
        : `${SERVICE_PATH}/${name}${options.query ?? ''}`;
    const info = parseRequestInfo(method, url) as ResourceRequestInfo;
    return {
      info: { ...info, name },
      method,
      url,
      contentType: options.contentType ?? 'application/json',
      bytes: Buffer.from(JSON.stringify(body)),
      authorize: () => {
        authorized.push(name);
        return Promise.resolve(
          allowed ? undefined : refusal(forbidden(`services "${name}" is forbidden`), 'forbidden'),
        );
      },
      dryRunInCell: () => {
        dryRuns++;
        const result = options.dryRunResult;
        if (!result) throw new Error('no dry run expected');
        return Promise.resolve(
          'kind' in result && result.kind === 'Status' ? answer(422, result) : answer(200, result),
        );
      },
    };
  };
  return {
    ...plane,
    claims,
    authorized,
    writeOf,
    deny: () => (allowed = false),
    dryRuns: () => dryRuns,
  };
}

const nodePortsOfBody = (body: Buffer | undefined) =>
  (JSON.parse(String(body)) as Service).spec?.ports?.map((port) => port.nodePort);

describe('NodePortClaims', () => {
  it('sends a create without node ports as it is, asking the control plane nothing', async () => {
    const { claims, writeOf, calls } = setup();
    const prepared = await claims.prepare(writeOf('POST', 'db', service('db', { ports: [{ port: 80 }] })));
    expect(prepared).toMatchObject({ kind: 'send' });
    expect(prepared.kind === 'send' && prepared.body).toBeFalsy();
    expect(calls).toEqual([]);
  });

  it('reads a protobuf body as the apiserver will, and writes the claimed ports into it', async () => {
    const { claims, writeOf, calls, dryRuns, services } = setup();
    const protobuf = 'application/vnd.kubernetes.protobuf';
    const plain = writeOf('POST', 'db', {}, { contentType: protobuf });
    expect(
      await claims.prepare({
        ...plain,
        bytes: protobufService({ type: 'ClusterIP', ports: [{ port: 80 }] }),
      }),
    ).toMatchObject({ kind: 'send' });
    expect(calls).toEqual([]);
    // A NodePort: the control plane picks the port (never the cell's dry run, whose pick is a placeholder).
    const ported = writeOf('POST', 'web', {}, { contentType: protobuf });
    const prepared = await claims.prepare({
      ...ported,
      bytes: protobufService({ type: 'NodePort', ports: [{ port: 80 }, { port: 81, nodePort: 30500 }] }),
    });
    if (prepared.kind !== 'send' || !prepared.body)
      throw new Error(`not rewritten: ${JSON.stringify(prepared)}`);
    expect(dryRuns()).toBe(0);
    expect(prepared.body.contentType).toBe(protobuf);
    expect(readProtobufService(prepared.body.bytes)?.spec?.ports).toEqual([
      { port: 80, nodePort: 30000 },
      { port: 81, nodePort: 30500 },
    ]);
    expect(services.get(claimKey('web'))?.spec?.ports?.map((port) => port.nodePort)).toEqual([30000, 30500]);
  });

  it('claims the ports a create asks for, and refuses a port another Service holds in the allocator’s words', async () => {
    const { claims, writeOf, services, authorized } = setup();
    const first = await claims.prepare(
      writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] })),
    );
    expect(first.kind).toBe('send');
    // The claim is in cellfed's namespace, named by a hash, and names its Service.
    expect(services.get(claimKey('web'))?.metadata).toMatchObject({
      labels: { [NODE_PORT_CLAIM_LABEL]: '' },
      annotations: { [NODE_PORTS_OF_ANNOTATION]: 'shop/web' },
    });
    expect(services.get(claimKey('web'))?.spec).toEqual({
      type: 'NodePort',
      ports: [{ port: 80, nodePort: 30080 }],
    });
    const second = await claims.prepare(
      writeOf('POST', 'api', service('api', { type: 'NodePort', ports: [{ port: 81, nodePort: 30080 }] })),
    );
    expect(second).toMatchObject({
      kind: 'refuse',
      status: {
        code: 422,
        reason: 'Invalid',
        message:
          'Service "api" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated',
      },
    });
    expect(authorized).toEqual(['web', 'api']);
  });

  it('gives a create the ports the control plane chose, and claims nothing for a caller not allowed the write', async () => {
    const { claims, writeOf, services, deny } = setup();
    await claims.prepare(
      writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 30000 }] })),
    );
    const prepared = await claims.prepare(
      writeOf(
        'POST',
        'lb',
        service('lb', {
          type: 'LoadBalancer',
          ports: [{ port: 80 }, { port: 443 }],
          selector: { app: 'lb' },
        }),
      ),
    );
    expect(prepared.kind === 'send' && nodePortsOfBody(prepared.body?.bytes)).toEqual([30001, 30002]);
    // The cell gets the caller's whole Service, the ports filled in; the claim holds no selector.
    expect(prepared.kind === 'send' && JSON.parse(String(prepared.body?.bytes)).spec.selector).toEqual({
      app: 'lb',
    });
    expect(services.get(claimKey('lb'))?.spec?.['selector']).toBeUndefined();
    deny();
    const refused = await claims.prepare(
      writeOf('POST', 'x', service('x', { type: 'NodePort', ports: [{ port: 80 }] })),
    );
    expect(refused).toMatchObject({ kind: 'refuse', status: { code: 403 } });
    expect(services.has(claimKey('x'))).toBe(false);
  });

  it('gives a claim back when the cell refuses the write, and keeps it when the cell takes it', async () => {
    const { claims, writeOf, services } = setup();
    const refused = await claims.prepare(
      writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80 }] })),
    );
    if (refused.kind !== 'send') throw new Error('not sent');
    await refused.settle(409);
    expect(services.has(claimKey('web'))).toBe(false);
    const taken = await claims.prepare(
      writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80 }] })),
    );
    if (taken.kind !== 'send') throw new Error('not sent');
    await taken.settle(201);
    expect(services.has(claimKey('web'))).toBe(true);
  });

  it('claims a dry run as a dry run', async () => {
    const { claims, writeOf, services, calls } = setup();
    const prepared = await claims.prepare(
      writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80 }] }), {
        query: '?dryRun=All',
      }),
    );
    expect(prepared.kind === 'send' && nodePortsOfBody(prepared.body?.bytes)).toEqual([30000]);
    expect(calls).toContain(`POST /api/v1/namespaces/${CLAIMS_NAMESPACE}/services?dryRun=All`);
    expect(services.size).toBe(0);
  });

  it('frees the claim of a Service an update leaves without node ports, once the cell took the update', async () => {
    const { claims, writeOf, services } = setup();
    await claims.prepare(writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80 }] })));
    const update = await claims.prepare(
      writeOf('PUT', 'web', service('web', { type: 'ClusterIP', ports: [{ port: 80 }] })),
    );
    if (update.kind !== 'send') throw new Error('not sent');
    await update.settle(500);
    expect(services.has(claimKey('web'))).toBe(true);
    await update.settle(200);
    expect(services.has(claimKey('web'))).toBe(false);
  });

  it('puts a claim back as it was when the cell refuses an update that changed it', async () => {
    const { claims, writeOf, services } = setup();
    await claims.prepare(
      writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 30100 }] })),
    );
    const update = await claims.prepare(
      writeOf('PUT', 'web', service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 30200 }] })),
    );
    if (update.kind !== 'send') throw new Error('not sent');
    expect(services.get(claimKey('web'))?.spec?.ports?.[0]?.nodePort).toBe(30200);
    await update.settle(422);
    expect(services.get(claimKey('web'))?.spec?.ports?.[0]?.nodePort).toBe(30100);
  });

  it('sends a patch that cannot give node ports as it is, without a dry run', async () => {
    const { claims, writeOf, dryRuns } = setup();
    const prepared = await claims.prepare(
      writeOf(
        'PATCH',
        'web',
        { metadata: { labels: { tier: 'front' } } },
        { contentType: 'application/merge-patch+json' },
      ),
    );
    expect(prepared).toMatchObject({ kind: 'send' });
    expect(dryRuns()).toBe(0);
  });

  it('has the control plane pick a port a patch did not name, and sends the patch as the update of its result', async () => {
    const { claims, writeOf, services } = setup();
    await claims.prepare(
      writeOf('POST', 'a', service('a', { type: 'NodePort', ports: [{ port: 80, nodePort: 30000 }] })),
    );
    // A dry run's pick is a placeholder (kube-apiserver's is 32769 on): never claimed as it is.
    const result = {
      ...service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 32769 }] }),
      metadata: { name: 'web', resourceVersion: '7' },
    };
    const prepared = await claims.prepare(
      writeOf(
        'PATCH',
        'web',
        { spec: { type: 'NodePort' } },
        { contentType: 'application/merge-patch+json', dryRunResult: result },
      ),
    );
    if (prepared.kind !== 'send') throw new Error(`not sent: ${JSON.stringify(prepared)}`);
    expect(prepared.body?.method).toBe('PUT');
    expect(nodePortsOfBody(prepared.body?.bytes)).toEqual([30001]);
    expect(JSON.parse(String(prepared.body?.bytes)).metadata.resourceVersion).toBe('7');
    expect(services.get(claimKey('web'))?.spec?.ports?.[0]?.nodePort).toBe(30001);
  });

  it('refuses a patch that names a port another Service holds, whichever way it names it', async () => {
    const { claims, writeOf } = setup();
    await claims.prepare(
      writeOf('POST', 'a', service('a', { type: 'NodePort', ports: [{ port: 80, nodePort: 30000 }] })),
    );
    const result = service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 30000 }] });
    const merge = await claims.prepare(
      writeOf(
        'PATCH',
        'web',
        { spec: { type: 'NodePort', ports: [{ port: 80, nodePort: 30000 }] } },
        {
          contentType: 'application/strategic-merge-patch+json',
          dryRunResult: result,
        },
      ),
    );
    expect(merge).toMatchObject({ kind: 'refuse', status: { code: 422 } });
    const jsonPatch = await claims.prepare(
      writeOf('PATCH', 'web', [{ op: 'replace', path: '/spec/ports/0/nodePort', value: 30000 }], {
        contentType: 'application/json-patch+json',
        dryRunResult: result,
      }),
    );
    expect(jsonPatch).toMatchObject({ kind: 'refuse', status: { code: 422 } });
  });

  it('answers with the cell’s refusal of the dry run', async () => {
    const { claims, writeOf, calls } = setup();
    const status = { kind: 'Status' as const, code: 422, reason: 'Invalid' };
    const prepared = await claims.prepare(
      writeOf('PATCH', 'web', [{ op: 'add', path: '/spec/type', value: 'NodePort' }], {
        contentType: 'application/json-patch+json',
        dryRunResult: status,
      }),
    );
    expect(prepared).toMatchObject({ kind: 'cell-answer' });
    expect(calls.filter((call) => !call.startsWith('GET'))).toEqual([]);
  });

  it('frees the ports of a Service once gone, not of one finalizers hold (a 202, or a 200 and still there) or a dry run', async () => {
    const { claims, writeOf, services } = setup();
    await claims.prepare(writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80 }] })));
    const info = parseRequestInfo('DELETE', `${SERVICE_PATH}/web`) as ResourceRequestInfo;
    const gone = () => Promise.resolve(true);
    await claims.deleted(info, `${SERVICE_PATH}/web`, 202, allow, gone);
    await claims.deleted(info, `${SERVICE_PATH}/web?dryRun=All`, 200, allow, gone);
    await claims.deleted(info, `${SERVICE_PATH}/web`, 200, allow, () => Promise.resolve(false));
    expect(services.has(claimKey('web'))).toBe(true);
    await claims.deleted(info, `${SERVICE_PATH}/web`, 200, deny, gone);
    expect(services.has(claimKey('web'))).toBe(true);
    await claims.deleted(info, `${SERVICE_PATH}/web`, 200, allow, gone);
    expect(services.has(claimKey('web'))).toBe(false);
  });

  it('asks the cell first when a create names a Service whose claim exists, and takes a claim left behind over', async () => {
    const { claims, writeOf, services } = setup();
    await claims.prepare(
      writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 30100 }] })),
    );
    const before = structuredClone(services.get(claimKey('web')));
    // The Service is there: the cell's AlreadyExists is the answer, and its claim is untouched.
    const exists = await claims.prepare(
      writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 30200 }] }), {
        dryRunResult: { kind: 'Status', code: 409 },
      }),
    );
    expect(exists).toMatchObject({ kind: 'cell-answer' });
    expect(services.get(claimKey('web'))).toEqual(before);
    // It is not (a claim left behind): the create takes it over, marked when, so the collector waits.
    const taken = await claims.prepare(
      writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 30100 }] }), {
        dryRunResult: service('web', {}),
      }),
    );
    expect(taken.kind).toBe('send');
    expect(
      services.get(claimKey('web'))?.metadata.annotations?.[NODE_PORTS_CLAIMED_AT_ANNOTATION],
    ).toBeDefined();
    expect(services.get(claimKey('web'))?.metadata.resourceVersion).not.toBe(
      before?.metadata.resourceVersion,
    );
  });

  it('never puts a claim back over one another write made meanwhile', async () => {
    const { claims, writeOf, services } = setup();
    await claims.prepare(
      writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 30100 }] })),
    );
    const update = await claims.prepare(
      writeOf('PUT', 'web', service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 30200 }] })),
    );
    if (update.kind !== 'send') throw new Error('not sent');
    const later = await claims.prepare(
      writeOf('PUT', 'web', service('web', { type: 'NodePort', ports: [{ port: 80, nodePort: 30300 }] })),
    );
    expect(later.kind).toBe('send');
    await update.settle(422);
    expect(services.get(claimKey('web'))?.spec?.ports?.[0]?.nodePort).toBe(30300);
  });

  it('never takes a control-plane Service at a claim’s name that is not the claim of that Service', async () => {
    const { claims, writeOf, services } = setup();
    const ref = nodePortClaimRef(CLAIMS_NAMESPACE, { namespace: 'shop', name: 'own' });
    // As if another Service's name hashed to the same: the claim there names that one.
    services.set(claimKey('own'), {
      ...service(ref.name, { type: 'NodePort', ports: [{ port: 1, nodePort: 30500 }] }),
      metadata: {
        ...ref,
        uid: 'u',
        labels: { [NODE_PORT_CLAIM_LABEL]: '' },
        annotations: { [NODE_PORTS_OF_ANNOTATION]: 'other/svc' },
      },
    });
    const prepared = await claims.prepare(
      writeOf('PUT', 'own', service('own', { type: 'NodePort', ports: [{ port: 80 }] })),
    );
    expect(prepared).toMatchObject({ kind: 'refuse', status: { code: 409 } });
    // A caller not allowed the write learns nothing of it: kube-apiserver's 403.
    const { claims: others, writeOf: othersWrite, services: theirs, deny: denyAll, calls } = setup();
    theirs.set(claimKey('own'), services.get(claimKey('own'))!);
    denyAll();
    expect(
      await others.prepare(
        othersWrite('PUT', 'own', service('own', { type: 'NodePort', ports: [{ port: 80 }] })),
      ),
    ).toMatchObject({ kind: 'refuse', status: { code: 403 } });
    const info = parseRequestInfo('DELETE', `${SERVICE_PATH}/own`) as ResourceRequestInfo;
    await others.deleted(info, `${SERVICE_PATH}/own`, 200, deny, () => Promise.resolve(true));
    // Not even a read as the router for a caller the control plane refuses.
    expect(calls).toEqual([]);
    await claims.deleted(info, `${SERVICE_PATH}/own`, 200, allow, () => Promise.resolve(true));
    expect(services.has(claimKey('own'))).toBe(true);
  });

  it('answers a claim the control plane will not take for a reason not the caller’s with a 500 naming the Service', async () => {
    const { claims, writeOf, client } = setup();
    (client as { raw: unknown }).raw = () =>
      Promise.resolve({
        statusCode: 403,
        body: {
          text: () =>
            Promise.resolve(
              JSON.stringify({
                kind: 'Status',
                code: 403,
                reason: 'Forbidden',
                message: 'services is forbidden',
              }),
            ),
        },
      });
    expect(
      await claims.prepare(
        writeOf('POST', 'web', service('web', { type: 'NodePort', ports: [{ port: 80 }] })),
      ),
    ).toMatchObject({
      kind: 'refuse',
      status: {
        code: 500,
        message: expect.stringContaining('node ports of service "web" could not be claimed'),
      },
    });
  });
});
