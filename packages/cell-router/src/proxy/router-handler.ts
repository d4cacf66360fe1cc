import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';

import { needsOldCopy, resolveTarget, type OldCopy } from '@cellfed/hashing';
import { errorMessage, type KubeClient } from '@cellfed/controller-kit';
import type { Logger } from 'pino';

import type { Authenticator } from '../auth/authenticator.ts';
import { impersonationHeaders, mayImpersonate, requestedImpersonation } from '../auth/impersonation.ts';
import type { UserInfo } from '../auth/user-info.ts';
import { generateName } from '../request/generate-name.ts';
import { BodyNameError, mediaType, namesFromBody } from '../request/object-name.ts';
import { parseRequestInfo, type ResourceRequestInfo } from '../request/request-info.ts';
import { planRoute, type NamespaceLabels, type RoutePlan, type RoutingState } from '../routing/route-plan.ts';
import {
  badRequest,
  forbidden,
  internalError,
  requestEntityTooLarge,
  serviceUnavailable,
  tooManyRequests,
  unauthorized,
  failure,
  type KubeStatus,
} from '../status/kube-status.ts';
import { downstreamHeaders, upstreamHeaders } from './headers.ts';
import type { OldCopies } from './old-copies.ts';

/** kube-apiserver's limit on a request body. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface RouterHandlerOptions {
  authenticator: Authenticator;
  controlPlane: KubeClient;
  /** The client of an engaged cell. */
  cell: (id: string) => KubeClient | undefined;
  state: () => RoutingState | undefined;
  namespaceLabels?: NamespaceLabels;
  oldCopies: OldCopies;
  logger: Logger;
  maxBodyBytes?: number;
}

type Outcome = { status: number; cell: string; reason: string };

/**
 * One request, start to end: who is calling, what it is about, where it goes (planned without I/O), then
 * carried out. Every refusal is a Kubernetes Status; every request leaves one access-log line with the cell.
 */
export class RouterHandler {
  private readonly options: RouterHandlerOptions;
  private readonly maxBodyBytes: number;

  constructor(options: RouterHandlerOptions) {
    this.options = options;
    this.maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  }

  readonly handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const started = performance.now();
    const method = request.method ?? 'GET';
    const target = request.url ?? '/';
    let outcome: Outcome = { status: 500, cell: '', reason: 'unhandled' };
    let user: string | undefined;
    try {
      const authentication = await this.options.authenticator.authenticate(request);
      if ('failure' in authentication) {
        outcome = this.sendStatus(response, unauthorized(), '', 'unauthenticated');
        return;
      }
      user = authentication.user.username;
      const effective = await this.effectiveUser(authentication.user, request);
      if (typeof effective === 'string') {
        outcome = this.sendStatus(response, forbidden(effective), '', 'impersonation-denied');
        return;
      }
      const info = parseRequestInfo(method, target);
      const plan = planRoute(info, this.options.state(), this.options.namespaceLabels);
      outcome = await this.carryOut(plan, request, response, impersonationHeaders(effective));
    } catch (error) {
      this.options.logger.error(
        { err: errorMessage(error), method, path: target.split('?')[0] },
        'request failed',
      );
      if (!response.headersSent)
        outcome = this.sendStatus(response, internalError(errorMessage(error)), outcome.cell, 'error');
      else response.destroy();
    } finally {
      this.options.logger.info(
        {
          method,
          path: target.split('?')[0],
          user,
          cell: outcome.cell || undefined,
          code: outcome.status,
          route: outcome.reason,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        'request',
      );
    }
  };

  private async effectiveUser(caller: UserInfo, request: IncomingMessage): Promise<UserInfo | string> {
    const asked = requestedImpersonation(request.headers);
    if (!asked) return caller;
    const allowed = await mayImpersonate(this.options.controlPlane, caller, asked);
    return allowed === true ? asked : allowed;
  }

  private async carryOut(
    plan: RoutePlan,
    request: IncomingMessage,
    response: ServerResponse,
    impersonation: Record<string, string | string[]>,
  ): Promise<Outcome> {
    switch (plan.kind) {
      case 'reject':
        return this.sendStatus(response, plan.status, '', 'rejected');
      case 'control-plane':
        return this.forward(
          this.options.controlPlane,
          'control-plane',
          plan.reason,
          request,
          response,
          impersonation,
        );
      case 'all-cells':
        // Lists, watches and deletecollection across cells arrive with the next router issue.
        return this.sendStatus(
          response,
          failure(
            501,
            'NotImplemented',
            `${plan.info.verb} of ${plan.info.resource} across cells is not served by this router version yet`,
          ),
          '',
          'all-cells',
        );
      case 'name-in-body':
        return this.create(plan.info, request, response, impersonation);
      case 'object':
        return this.object(plan, request, response, impersonation);
    }
  }

  private async create(
    info: ResourceRequestInfo,
    request: IncomingMessage,
    response: ServerResponse,
    impersonation: Record<string, string | string[]>,
  ): Promise<Outcome> {
    const body = await readBody(request, this.maxBodyBytes);
    if (body === 'too-large')
      return this.sendStatus(response, requestEntityTooLarge(this.maxBodyBytes), '', 'too-large');
    let name: string | undefined;
    let payload = body;
    try {
      const names = namesFromBody(request.headers['content-type'], body);
      name = names.name;
      if (!name && names.generateName) {
        // The router names the object itself, so it knows where it goes.
        name = generateName(names.generateName);
        payload = withName(request.headers['content-type'], body, name);
      }
    } catch (error) {
      if (error instanceof BodyNameError)
        return this.sendStatus(response, badRequest(error.message), '', 'bad-body');
      throw error;
    }
    if (!name) {
      return this.sendStatus(
        response,
        failure(422, 'Invalid', 'metadata.name: Required value: name or generateName is required'),
        '',
        'no-name',
      );
    }
    const plan = planRoute(info, this.options.state(), this.options.namespaceLabels, name);
    if (plan.kind !== 'object') return this.carryOut(plan, request, response, impersonation);
    return this.object(plan, request, response, impersonation, payload);
  }

  private async object(
    plan: Extract<RoutePlan, { kind: 'object' }>,
    request: IncomingMessage,
    response: ServerResponse,
    impersonation: Record<string, string | string[]>,
    body?: Buffer,
  ): Promise<Outcome> {
    let oldCopy: OldCopy | undefined;
    if (needsOldCopy(plan.decision))
      oldCopy = await this.options.oldCopies.get(plan.decision.oldCell, plan.info, plan.access);
    const target = resolveTarget(plan.decision, plan.access, oldCopy);
    if (target.action === 'fence') {
      response.setHeader('Retry-After', String(target.retryAfterSeconds));
      const what = `${plan.info.resource} "${plan.info.name}"`;
      return this.sendStatus(
        response,
        tooManyRequests(
          `${what} is moving from cell ${plan.decision.oldCell} to ${plan.decision.newCell}; retry shortly`,
          target.retryAfterSeconds,
          plan.info.name,
        ),
        target.cell,
        target.reason,
      );
    }
    const client = this.options.cell(target.cell);
    if (!client) {
      return this.sendStatus(
        response,
        serviceUnavailable(`cell ${target.cell} is not connected`, 1),
        target.cell,
        'cell-unavailable',
      );
    }
    return this.forward(
      client,
      target.cell,
      `case-${plan.decision.case}:${target.reason}`,
      request,
      response,
      impersonation,
      body,
    );
  }

  private async forward(
    client: KubeClient,
    cell: string,
    reason: string,
    request: IncomingMessage,
    response: ServerResponse,
    impersonation: Record<string, string | string[]>,
    body?: Buffer,
  ): Promise<Outcome> {
    const abort = new AbortController();
    response.once('close', () => abort.abort());
    const hasBody = body !== undefined || hasRequestBody(request);
    const upstream = await client.raw((request.method ?? 'GET') as 'GET', request.url ?? '/', {
      headers: upstreamHeaders(request.headers, impersonation, body?.length),
      body: body ?? (hasBody ? request : null),
      signal: abort.signal,
    });
    response.writeHead(upstream.statusCode, downstreamHeaders(upstream.headers));
    // Watches and logs stream until either side closes.
    response.flushHeaders();
    await pipeline(upstream.body, response).catch(() => upstream.body.destroy());
    return { status: upstream.statusCode, cell, reason };
  }

  private sendStatus(response: ServerResponse, status: KubeStatus, cell: string, reason: string): Outcome {
    const text = JSON.stringify(status);
    response.writeHead(status.code, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    response.end(text);
    return { status: status.code, cell, reason };
  }
}

function hasRequestBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

/** Reads a body up to `limit` bytes; a larger one is not kept (and the answer is 413). */
async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      request.resume();
      return 'too-large';
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Sets metadata.name in a JSON or YAML body (generateName is then ignored by the apiserver). */
function withName(contentType: string | undefined, body: Buffer, name: string): Buffer {
  const type = mediaType(contentType);
  if (type !== 'application/json') {
    throw new BodyNameError(`generateName through the router needs a JSON body; got ${type}`);
  }
  const object = JSON.parse(body.toString('utf8')) as { metadata: Record<string, unknown> };
  object.metadata.name = name;
  return Buffer.from(JSON.stringify(object));
}
