import { NODE_PORTS_CLAIMED_AT_ANNOTATION } from '@cellfed/api';
import { ApiError, readIfExists, type KubeClient } from '@cellfed/controller-kit';
import {
  PROTOBUF,
  SERVICES,
  claimedService,
  hasNodePorts,
  holdsClaimedPorts,
  nodePortClaim,
  nodePortClaimRef,
  nodePortsOf,
  resourcePath,
  withClaimedPorts,
  type Service,
  type ServiceRef,
} from '@cellfed/federation';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';

import type { Authorize } from '../auth/request-authorization.ts';
import { mediaType } from '../request/object-name.ts';
import { protobufServiceWithNodePorts, readProtobufService } from '../request/protobuf-service.ts';
import { isDryRun, withQuery } from '../request/query-param.ts';
import type { ResourceRequestInfo } from '../request/request-info.ts';
import { failure, parseStatus, statusFromText, type KubeStatus } from '../status/kube-status.ts';
import { decodeWriteBody } from '../views/write-body.ts';
import { sendUpstream, type BufferedBody } from './forward.ts';
import type { ClientRequest } from '../server/client-request.ts';

/** A write to one Service, as its cell will take it. */
export interface ServiceWrite {
  readonly info: ResourceRequestInfo;
  readonly method: string | undefined;
  /** The caller's path and query. */
  readonly url: string;
  readonly contentType: string | undefined;
  /** The body as the cell takes it (in the cell's versions and marks). */
  readonly bytes: Buffer;
  readonly authorize: Authorize;
  /** Sends this write to the Service's cell as a dry run, as the caller: the Service it would make. */
  readonly dryRunInCell: () => Promise<Dispatcher.ResponseData>;
}

/** What happens to a Service write, its node ports claimed. */
export type PreparedWrite =
  /**
   * Send the write (`body` instead of the caller's when given), then `settle` with the cell's answer
   * before it is relayed: a refused write gives its claim back, a Service left without node ports frees them.
   */
  | { readonly kind: 'send'; readonly body?: BufferedBody; settle(code: number): Promise<void> }
  /** The control plane's allocator refused the ports (its words are kube-apiserver's), or the caller's write. */
  | { readonly kind: 'refuse'; readonly status: KubeStatus }
  /** The cell's answer to the dry run, which refused the write: the caller's answer. */
  | { readonly kind: 'cell-answer'; readonly upstream: Dispatcher.ResponseData };

/**
 * A Service write as the proxy sends it to `client` for the caller (`headers`: the caller's identity
 * there), its dry run the same request with `dryRun=All`, answered in JSON.
 */
export function cellServiceWrite(options: {
  readonly info: ResourceRequestInfo;
  readonly request: ClientRequest;
  readonly contentType: string | undefined;
  readonly body: BufferedBody;
  readonly authorize: Authorize;
  readonly client: KubeClient;
  readonly headers: Record<string, string | string[]>;
  readonly signal: AbortSignal;
}): ServiceWrite {
  const { info, request, body, client, headers, signal } = options;
  const url = request.url ?? '/';
  return {
    info,
    method: request.method,
    url,
    contentType: options.contentType,
    bytes: body.bytes,
    authorize: options.authorize,
    dryRunInCell: () =>
      sendUpstream(
        client,
        request,
        { ...headers, accept: 'application/json' },
        signal,
        body,
        withQuery(url, 'dryRun', 'All'),
      ),
  };
}

const SENT_AS_IS: PreparedWrite = { kind: 'send', settle: () => Promise.resolve() };

/** How often a claim changed by someone else meanwhile (a 409) is read and written again. */
const CLAIM_ATTEMPTS = 3;

/**
 * Node ports unique across the federation (docs/routing.md, "Node ports"). Each cell has its own node-port
 * allocator, so two cells would hand out the same port, which one apiserver never does. The control plane's
 * allocator decides instead: before a write gives a Service node ports, the router claims them there, in a
 * Service in cellfed's namespace that holds only the ports (federation's nodePortClaim, named by a hash of
 * the Service's namespace and name), and the cell's write carries the ports claimed. A port the caller asked for that another Service holds is refused
 * with the allocator's own words. The claim is the router's bookkeeping, written as the router, so only once
 * the caller is known to be allowed the write; a dry run claims as a dry run. A write the cell refuses gives
 * the claim back; a delete, or a write that leaves the Service without node ports, frees it. What the router
 * could not free (a crash, a collection delete) the rebalance controller's claim collector frees.
 */
export class NodePortClaims {
  private readonly controlPlane: KubeClient;
  /** cellfed's namespace in the control plane, where the claims are. */
  private readonly claimsNamespace: string;
  private readonly logger: Logger | undefined;

  constructor(controlPlane: KubeClient, claimsNamespace: string, logger?: Logger) {
    this.controlPlane = controlPlane;
    this.claimsNamespace = claimsNamespace;
    this.logger = logger;
  }

  /** Whether `info` is a write this class must see: a create, update, patch or delete of a Service. */
  static concerns(info: ResourceRequestInfo): boolean {
    return (
      info.apiGroup === '' &&
      info.resource === 'services' &&
      info.subresource === '' &&
      ['create', 'update', 'patch', 'delete'].includes(info.verb)
    );
  }

  /** Readies a create, update or patch of a Service for its cell. */
  async prepare(write: ServiceWrite): Promise<PreparedWrite> {
    const { info, method } = write;
    if (!NodePortClaims.concerns(info) || info.verb === 'delete') return SENT_AS_IS;
    const dryRun = isDryRun(write.url);
    const protobuf = mediaType(write.contentType) === PROTOBUF;
    // A create or update says all it asks for; a patch only says it to the cell (a dry run, below).
    const asWritten = method === 'PATCH' ? undefined : writtenService(write.bytes, write.contentType);
    // A body no apiserver could read is the cell's to refuse.
    if (method !== 'PATCH' && !asWritten) return SENT_AS_IS;
    const withoutNodePorts = asWritten !== undefined && !hasNodePorts(asWritten.spec);
    // A create without node ports needs nothing; everything else needs to know whether a claim exists.
    if (method === 'POST' && withoutNodePorts) return SENT_AS_IS;
    // Reading the claim is a request as the router: only for a caller the control plane allows the write.
    const refused = await write.authorize();
    if (refused) return { kind: 'refuse', status: refused.status };
    const service = { namespace: info.namespace, name: info.name };
    const existing = await this.readClaim(service);
    if (existing === 'not-a-claim') return { kind: 'refuse', status: notAClaim(service) };
    if (withoutNodePorts) return existing ? this.freedAfter(write, existing, dryRun) : SENT_AS_IS;
    if (method === 'POST' && existing) {
      // A create of a name whose claim exists: the Service may be there (the cell answers AlreadyExists),
      // and its claim must not change before the cell says so. A claim left behind is taken over.
      const upstream = await write.dryRunInCell();
      if (upstream.statusCode >= 300) return { kind: 'cell-answer', upstream };
      await upstream.body.dump();
    }
    let result: Service;
    /** Node ports the caller wrote: kept in the claim as they are (and refused when taken). */
    let asked: (port: number) => boolean;
    if (asWritten) {
      result = asWritten;
      asked = () => true;
    } else {
      if (method === 'PATCH' && !existing && !mayGiveNodePorts(write)) return SENT_AS_IS;
      const upstream = await write.dryRunInCell();
      if (upstream.statusCode >= 300) return { kind: 'cell-answer', upstream };
      const dryRunResult = asService(await upstream.body.json());
      if (!dryRunResult) return SENT_AS_IS;
      result = dryRunResult;
      // A port the dry run shows that the patch does not name is the cell's pick (a dry run's is a
      // placeholder): the allocator picks it again, unless the claim already holds it.
      const named = namedNodePorts(write);
      asked = (port) => named.has(port);
    }
    if (!hasNodePorts(result.spec)) return existing ? this.freedAfter(write, existing, dryRun) : SENT_AS_IS;
    const held = new Set(existing ? nodePortsOf(existing.spec) : []);
    const claimed = await this.claim(
      { ...result, metadata: { ...result.metadata, namespace: info.namespace, name: info.name } },
      service,
      existing,
      (port) => held.has(port) || asked(port),
      { dryRun, touch: method === 'POST' },
    );
    if ('status' in claimed) return { kind: 'refuse', status: claimed.status };
    const { claim, undo } = claimed;
    const settle = (code: number) => (ok(code) || dryRun ? done() : undo());
    // YAML is sent as the JSON it was read as: YAML readers differ on numbers (`031000`), JSON's do not.
    const yaml = asWritten && !protobuf && mediaType(write.contentType) !== 'application/json';
    if (holdsClaimedPorts(result, claim) && !yaml) return { kind: 'send', settle };
    if (asWritten && protobuf)
      return {
        kind: 'send',
        body: { bytes: protobufServiceWithNodePorts(write.bytes, claim), contentType: write.contentType },
        settle,
      };
    const body = withClaimedPorts(result, claim);
    if (asWritten) return { kind: 'send', body: jsonBody(body), settle };
    // The cell chose a port that another cell's Service holds: the write is sent as what it would have
    // made, with the ports claimed (a patch as the update of its result, at the version it read).
    if (method === 'POST') delete body.metadata.resourceVersion;
    return { kind: 'send', body: { ...jsonBody(body), method: method === 'POST' ? 'POST' : 'PUT' }, settle };
  }

  /** A write that leaves the Service without node ports: its claim is freed once the cell took it. */
  private freedAfter(write: ServiceWrite, claim: Service, dryRun: boolean): PreparedWrite {
    return {
      kind: 'send',
      settle: (code) => (ok(code) && !dryRun ? this.release(claim) : done()),
    };
  }

  /**
   * After a delete of a Service answered 200: once `gone` (the cell no longer holds it: finalizers may),
   * so are its ports. One still held is freed by the claim collector once it goes.
   */
  async deleted(
    info: ResourceRequestInfo,
    url: string,
    code: number,
    authorize: Authorize,
    gone: () => Promise<boolean>,
  ): Promise<void> {
    if (!NodePortClaims.concerns(info) || info.verb !== 'delete' || code !== 200 || isDryRun(url)) return;
    // The cell took the delete as the caller; the router reads as itself only once the control plane agrees.
    if (await authorize()) return;
    const existing = await this.readClaim(info).catch(() => undefined);
    if (!existing || existing === 'not-a-claim' || !(await gone().catch(() => false))) return;
    await this.release(existing);
  }

  /** The claim of `service`'s node ports; 'not-a-claim' if its name holds anything else. */
  private async readClaim(service: ServiceRef): Promise<Service | 'not-a-claim' | undefined> {
    const ref = nodePortClaimRef(this.claimsNamespace, service);
    const found = await readIfExists<Service>(
      this.controlPlane,
      resourcePath(SERVICES, ref.namespace, ref.name),
    );
    if (!found) return undefined;
    const of = claimedService(found);
    return of?.namespace === service.namespace && of.name === service.name ? found : 'not-a-claim';
  }

  /**
   * Writes the claim of `service`'s node ports (its ports that `keep` lets stay as they are; the allocator
   * picks the others) and hands back what the allocator made of it, and how to undo the write. `touch`: the
   * claim is written even when it holds the ports already, its claimed-at time now (a create taking over a
   * claim left behind, which the claim collector must not free in the meantime: its delete is conditional
   * on the version it read).
   */
  private async claim(
    service: Service,
    of: ServiceRef,
    existing: Service | undefined,
    keep: (port: number) => boolean,
    options: { dryRun: boolean; touch: boolean },
  ): Promise<{ claim: Service; undo: () => Promise<void> } | { status: KubeStatus }> {
    const { dryRun, touch } = options;
    const { namespace, name } = nodePortClaimRef(this.claimsNamespace, of);
    const query = dryRun ? '?dryRun=All' : '';
    let current = existing;
    for (let attempt = 1; ; attempt++) {
      const wanted = nodePortClaim(service, { namespace, name }, keep);
      if (touch) wanted.metadata.annotations![NODE_PORTS_CLAIMED_AT_ANNOTATION] = new Date().toISOString();
      else if (current && sameClaim(current, wanted)) return { claim: current, undo: done };
      const answer = current
        ? await this.send('PUT', `${resourcePath(SERVICES, namespace, name)}${query}`, of, {
            ...wanted,
            metadata: {
              ...current.metadata,
              labels: wanted.metadata.labels,
              annotations: wanted.metadata.annotations,
            },
          })
        : await this.send('POST', `${resourcePath(SERVICES, namespace)}${query}`, of, wanted);
      if ('claim' in answer) {
        const before = current;
        const made = answer.claim;
        const undo = before ? () => this.restore(before, made) : () => this.release(made);
        if (!dryRun)
          this.logger?.debug(
            {
              cell: 'control-plane',
              namespace: of.namespace,
              name: of.name,
              nodePorts: nodePortsOf(made.spec),
            },
            'node ports claimed',
          );
        return { claim: made, undo };
      }
      // Someone claimed or changed it meanwhile (another write of the same Service): read it again.
      if (answer.status.code !== 409 || attempt >= CLAIM_ATTEMPTS) return answer;
      const reread = await this.readClaim(of);
      if (reread === 'not-a-claim') return { status: notAClaim(of) };
      current = reread;
    }
  }

  /** Writes a claim of `of`'s node ports; a refusal as the control plane words it, of `of`'s name. */
  private async send(
    method: 'POST' | 'PUT',
    path: string,
    of: ServiceRef,
    body: Service,
  ): Promise<{ claim: Service } | { status: KubeStatus }> {
    const answer = await this.controlPlane.raw(method, path, {
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await answer.body.text();
    if (answer.statusCode < 300) return { claim: JSON.parse(text) as Service };
    const status = parseStatus(text);
    if (status?.kind !== 'Status' || (answer.statusCode !== 422 && answer.statusCode !== 409)) {
      // The router's own trouble (its rights, cellfed's namespace): logged, not told the caller.
      this.logger?.error(
        {
          cell: 'control-plane',
          namespace: of.namespace,
          name: of.name,
          code: answer.statusCode,
          err: status?.message ?? statusFromText(answer.statusCode, text).message,
        },
        'node ports could not be claimed',
      );
      return {
        status: failure(
          500,
          'InternalError',
          `Internal error occurred: the node ports of service "${of.name}" could not be claimed; the router's log says why`,
        ),
      };
    }
    // The allocator's refusal as kube-apiserver words it, its details (the field) too, naming the caller's
    // Service rather than the claim.
    const claimName = body.metadata.name ?? '';
    const named = (words: string | undefined) => words?.replaceAll(`"${claimName}"`, `"${of.name}"`);
    const refusal = status as KubeStatus;
    return {
      status: {
        ...refusal,
        code: answer.statusCode,
        message: named(refusal.message) ?? '',
        ...(refusal.details ? { details: { ...refusal.details, name: of.name } } : {}),
      },
    };
  }

  /**
   * Puts a claim back as it was before a write the cell then refused: only if it is still the one this
   * write made (its version), never over another write's claim made meanwhile.
   */
  private async restore(before: Service, made: Service): Promise<void> {
    const { namespace = '', name = '' } = before.metadata;
    try {
      await this.controlPlane.request('PUT', resourcePath(SERVICES, namespace, name), {
        body: { ...before, metadata: { ...before.metadata, resourceVersion: made.metadata.resourceVersion } },
      });
    } catch (error) {
      if (error instanceof ApiError && (error.statusCode === 409 || error.statusCode === 404)) return;
      this.logger?.warn(
        { cell: 'control-plane', namespace, name, err: (error as Error).message },
        'a node-port claim could not be put back; the claim collector will',
      );
    }
  }

  /** Frees a claim's ports: deleted only if it is still the one read (its uid and version). */
  private async release(claim: Service): Promise<void> {
    const { namespace = '', name = '', uid, resourceVersion } = claim.metadata;
    try {
      await this.controlPlane.request('DELETE', resourcePath(SERVICES, namespace, name), {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid, resourceVersion } },
      });
      this.logger?.debug({ cell: 'control-plane', namespace, name }, 'node ports freed');
    } catch (error) {
      this.logger?.warn(
        { cell: 'control-plane', namespace, name, err: (error as Error).message },
        'a node-port claim could not be freed; the claim collector will',
      );
    }
  }
}

const done = () => Promise.resolve();
const ok = (code: number) => code >= 200 && code < 300;

function asService(value: unknown): Service | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const service = value as Service;
  return typeof service.metadata === 'object' && service.metadata !== null ? service : undefined;
}

function jsonBody(service: Service): BufferedBody {
  return { bytes: Buffer.from(JSON.stringify(service)), contentType: 'application/json' };
}

/** Whether two claims hold the same: their specs' allocator fields as written (the allocator fills none in). */
function sameClaim(current: Service, wanted: Service): boolean {
  if (current.spec?.type !== wanted.spec?.type) return false;
  if (!holdsClaimedPorts(current, wanted)) return false;
  const ports = (service: Service) =>
    JSON.stringify(
      (service.spec?.ports ?? []).map(({ name, port, protocol }) => [name, port, protocol ?? 'TCP']),
    );
  return (
    ports(current) === ports(wanted) &&
    (current.spec?.externalTrafficPolicy ?? 'Cluster') ===
      (wanted.spec?.externalTrafficPolicy ?? 'Cluster') &&
    current.spec?.allocateLoadBalancerNodePorts === wanted.spec?.allocateLoadBalancerNodePorts
  );
}

/** Fields and values only a patch that may give a Service node ports (or change them) names. */
const NODE_PORT_WORDS = new Set([
  'NodePort',
  'LoadBalancer',
  'nodePort',
  'healthCheckNodePort',
  'allocateLoadBalancerNodePorts',
  'externalTrafficPolicy',
  'ports',
]);

/**
 * Whether a patch of a Service without node ports may give it some: a JSON patch may (its operations copy
 * and move values), as may any other that names a type, a port or a field the allocator reads.
 */
function mayGiveNodePorts(write: ServiceWrite): boolean {
  if (mediaType(write.contentType) === 'application/json-patch+json') return true;
  const decoded = decodeWriteBody(write.bytes, write.contentType);
  if (!('value' in decoded)) return true;
  return someNode(
    decoded.value,
    (key, value) => NODE_PORT_WORDS.has(key) || NODE_PORT_WORDS.has(String(value)),
  );
}

/** The node ports a patch names: values of `nodePort`/`healthCheckNodePort` fields, or JSON-patch values at such paths. */
function namedNodePorts(write: ServiceWrite): Set<number> {
  const named = new Set<number>();
  const decoded = decodeWriteBody(write.bytes, write.contentType);
  if (!('value' in decoded)) return named;
  someNode(decoded.value, (key, value, parent) => {
    if ((key === 'nodePort' || key === 'healthCheckNodePort') && typeof value === 'number') named.add(value);
    if (key === 'value' && typeof value === 'number' && /NodePort$|nodePort$/.test(String(parent.path)))
      named.add(value);
    return false;
  });
  return named;
}

/** Walks every field of a decoded body until `test` holds for one. */
function someNode(
  root: unknown,
  test: (key: string, value: unknown, parent: Record<string, unknown>) => boolean,
): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    const object = node as Record<string, unknown>;
    for (const [key, value] of Object.entries(object)) {
      if (test(key, value, object)) return true;
      stack.push(value);
    }
  }
  return false;
}

function notAClaim(service: ServiceRef): KubeStatus {
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on services "${service.name}": the name of the control-plane Service that would claim the node ports of ${service.namespace}/${service.name} holds another object, so its node ports cannot be claimed`,
  );
}

/** A create or update's body, read as the apiserver will read it (protobuf only for what node ports need). */
function writtenService(bytes: Buffer, contentType: string | undefined): Service | undefined {
  if (mediaType(contentType) === PROTOBUF) return readProtobufService(bytes);
  const decoded = decodeWriteBody(bytes, contentType);
  return 'value' in decoded ? asService(decoded.value) : undefined;
}
