import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

import { DEFAULT_RETRY_AFTER_SECONDS, needsOldCopy, resolveTarget, type OldCopy } from '@cellfed/hashing';
import { NOOP_TRACER, errorMessage, traceHeadersOf, type KubeClient } from '@cellfed/controller-kit';
import type { Span, Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';

import type { Authenticator } from '../auth/authenticator.ts';
import { impersonationHeaders, mayImpersonate, requestedImpersonation } from '../auth/impersonation.ts';
import type { UserInfo } from '../auth/user-info.ts';
import type { RouterMetrics } from '../metrics/router-metrics.ts';
import { generateName } from '../request/generate-name.ts';
import { BodyNameError, namesFromBody, withName } from '../request/object-name.ts';
import { objectPath } from '../request/object-path.ts';
import { parseRequestInfo, type RequestInfo, type ResourceRequestInfo } from '../request/request-info.ts';
import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import {
  collectionSources,
  planRoute,
  type NamespaceLabels,
  type Placement,
  type RoutePlan,
  type RoutingState,
} from '../routing/route-plan.ts';
import {
  badRequest,
  cellFailure,
  failure,
  forbidden,
  internalError,
  methodNotAllowed,
  parseStatus,
  requestEntityTooLarge,
  serviceUnavailable,
  tooManyRequests,
  unauthorized,
} from '../status/kube-status.ts';
import { serveMergedList } from '../collections/merged-list.ts';
import { serveMergedWatch } from '../collections/merged-watch.ts';
import type { CellNamespaces } from './cell-namespaces.ts';
import { CellMadeRequests } from './cell-made-requests.ts';
import type { OwnerUids } from '../views/owner-uids.ts';
import {
  RETRY_SOON,
  SHOWN_ANSWER,
  outcomeOf,
  refusal,
  sendRefusal,
  type Destination,
  type FromBackup,
  type Impersonation,
  type Refusal,
} from './destination.ts';
import { deleteCollection } from './delete-collection.ts';
import {
  abortResponse,
  releaseUnreadBody,
  hasRequestBody,
  acceptsOnlyProtobuf,
  jsonAccept,
  streamedBody,
  type ClientRequest,
  type ClientResponse,
} from './client-exchange.ts';
import {
  MAX_BODY_BYTES,
  abortOnClose,
  readBody,
  relay,
  relayUnlessFenced,
  sendJson,
  sendUpstream,
  type BufferedBody,
} from './forward.ts';
import { upstreamHeaders } from './headers.ts';
import { endRequestSpan, startRequestSpan, type RequestOutcome } from '../tracing/request-span.ts';
import { cellVersionBody } from './version-translation.ts';
import { cellWriteBody } from './cell-writes.ts';
import { heldDependentsFinalizer, holdForCollector } from './held-dependents-deletes.ts';
import { showObject } from '../views/client-view.ts';
import type { OldCopies } from './old-copies.ts';
import { failoverState, type FailoverState } from './pending-backups.ts';
import { relayUpgrade, writeStatusToSocket } from './upgrade-relay.ts';
import { PROTOBUF as PROTOBUF_MEDIA_TYPE } from '../collections/protobuf-list.ts';
import { protobufObject } from '../collections/protobuf-watch.ts';
import { PROTOBUF_WATCH } from '../collections/watch-codec.ts';

/** Seconds a write to an object being restored from its backup is told to wait. */
const RESTORE_RETRY_AFTER_SECONDS = 1;

/** kube-apiserver tries 8 names for a generateName create before it gives up; so does the router. */
const GENERATE_NAME_ATTEMPTS = 8;

export interface RouterHandlerOptions {
  authenticator: Pick<Authenticator, 'authenticate'>;
  controlPlane: KubeClient;
  /** The client of an engaged cell. */
  cell: (id: string) => KubeClient | undefined;
  state: () => RoutingState | undefined;
  namespaceLabels?: NamespaceLabels;
  /** Whether the control plane deleted the namespace (see MergedListRequest.namespaceDeleted). */
  namespaceDeleted?: (namespace: string) => boolean;
  oldCopies: OldCopies;
  /**
   * The uids clients know in the owner references cells' controllers set on what they make (a ReplicaSet's
   * to its moved Deployment); none: shown as the cells have them.
   */
  ownerUids?: OwnerUids;
  /** Creates a control-plane namespace in a cell that does not have it yet, before a write into it. */
  cellNamespaces?: Pick<CellNamespaces, 'ensure'>;
  metrics?: RouterMetrics;
  /** A server span per request, the parent of what the router sends on; none by default. */
  tracer?: Tracer;
  logger: Logger;
  maxBodyBytes?: number;
}

type ObjectPlan = Extract<RoutePlan, { kind: 'object' }>;

type Admission = { user: UserInfo; impersonation: Impersonation } | { refusal: Refusal };

/**
 * One request, start to end: who is calling, what it is about, where it goes (planned without I/O), then
 * carried out. Every refusal is a Kubernetes Status; every request leaves one access-log line with the cell
 * and the object, and is counted in the metrics.
 */
export class RouterHandler {
  private readonly options: RouterHandlerOptions;
  private readonly maxBodyBytes: number;
  private readonly tracer: Tracer;
  private readonly cellMade: CellMadeRequests;

  constructor(options: RouterHandlerOptions) {
    this.options = options;
    this.maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
    this.tracer = options.tracer ?? NOOP_TRACER;
    this.cellMade = new CellMadeRequests({
      state: options.state,
      source: this.source,
      ownerUids: options.ownerUids,
      cellNamespaces: options.cellNamespaces,
      maxBodyBytes: this.maxBodyBytes,
    });
  }

  readonly handle = async (request: ClientRequest, response: ClientResponse): Promise<void> => {
    const started = performance.now();
    const info = requestInfo(request);
    const span = startRequestSpan(this.tracer, request, info);
    let outcome: RequestOutcome = { code: 500, cell: '', route: 'unhandled' };
    let user: string | undefined;
    try {
      if (typeof info === 'string') {
        outcome = this.refuse(response, refusal(badRequest(info), 'bad-path'));
        return;
      }
      const admission = await this.admit(request, span);
      if ('refusal' in admission) {
        outcome = this.refuse(response, admission.refusal);
        return;
      }
      user = admission.user.username;
      outcome = await this.serve(info, request, response, admission.impersonation);
    } catch (error) {
      if (request.destroyed || response.destroyed) outcome = this.callerGone(error, request, info, outcome);
      else {
        this.options.logger.error(
          { err: errorMessage(error), ...logFields(request, info) },
          'request failed',
        );
        if (!response.headersSent)
          outcome = this.refuse(response, refusal(internalError(errorMessage(error)), 'error', outcome.cell));
        else abortResponse(response);
      }
    } finally {
      releaseUnreadBody(request);
      this.finish(request, info, user, outcome, started, span);
    }
  };

  /** exec, attach and port-forward: routed like any request to their object, then relayed as an upgrade. */
  readonly handleUpgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const started = performance.now();
    const info = requestInfo(request);
    const span = startRequestSpan(this.tracer, request, info);
    let outcome: RequestOutcome = { code: 500, cell: '', route: 'unhandled' };
    let user: string | undefined;
    const refuse = (destination: Refusal): RequestOutcome => {
      writeStatusToSocket(socket, destination.status, destination.headers);
      return outcomeOf(destination, destination.status.code);
    };
    try {
      if (typeof info === 'string') {
        outcome = refuse(refusal(badRequest(info), 'bad-path'));
        return;
      }
      const admission = await this.admit(request, span);
      if ('refusal' in admission) {
        outcome = refuse(admission.refusal);
        return;
      }
      user = admission.user.username;
      const plan = planRoute(info, this.options.state(), this.options.namespaceLabels);
      let destination: Destination;
      if (plan.kind === 'control-plane') {
        destination = {
          kind: 'cell',
          client: this.options.controlPlane,
          cell: 'control-plane',
          route: plan.reason,
        };
      } else if (plan.kind === 'object') {
        destination = await this.destination(plan, admission.impersonation);
      } else if (plan.kind === 'cell-made') {
        destination = await this.cellMade.destination(plan, admission.impersonation);
      } else if (plan.kind === 'reject') {
        destination = refusal(plan.status, 'rejected');
      } else {
        destination = refusal(badRequest('an upgrade request must name one object'), 'bad-upgrade');
      }
      if (destination.kind === 'backup') destination = restoringRefusal(plan as ObjectPlan, destination);
      if (destination.kind === 'refuse') {
        outcome = refuse(destination);
        return;
      }
      // Logged when the tunnel ends, with the apiserver's code (101 for an upgrade that took place).
      outcome = { ...outcomeOf(destination, 101), route: `upgrade:${destination.route}` };
      const code = await relayUpgrade(destination.client, request, socket, head, admission.impersonation);
      outcome = { ...outcome, code };
    } catch (error) {
      if (socket.destroyed) outcome = this.callerGone(error, request, info, outcome);
      else {
        this.options.logger.error(
          { err: errorMessage(error), ...logFields(request, info) },
          'upgrade failed',
        );
        outcome = refuse(refusal(internalError(errorMessage(error)), 'error', outcome.cell));
      }
    } finally {
      this.finish(request, info, user, outcome, started, span);
    }
  };

  /**
   * The caller went away mid-request (an upload reset, say): nobody is left to answer. Logged as nginx does,
   * 499, and not as the router's own failure.
   */
  private callerGone(
    error: unknown,
    request: ClientRequest,
    info: RequestInfo | string,
    outcome: RequestOutcome,
  ): RequestOutcome {
    this.options.logger.warn({ err: errorMessage(error), ...logFields(request, info) }, 'caller went away');
    return { code: 499, cell: outcome.cell, route: 'caller-gone' };
  }

  private async admit(request: ClientRequest, span: Span): Promise<Admission> {
    const authentication = await this.options.authenticator.authenticate(request);
    if ('failure' in authentication) return { refusal: refusal(unauthorized(), 'unauthenticated') };
    const caller = authentication.user;
    const asked = requestedImpersonation(request.headers);
    let effective = caller;
    if (asked) {
      const allowed = await mayImpersonate(this.options.controlPlane, caller, asked);
      if (allowed !== true) return { refusal: refusal(forbidden(allowed), 'impersonation-denied') };
      effective = asked;
    }
    return {
      user: caller,
      impersonation: { ...impersonationHeaders(effective), ...traceHeadersOf(span) },
    };
  }

  private async serve(
    info: RequestInfo,
    request: ClientRequest,
    response: ClientResponse,
    impersonation: Impersonation,
  ): Promise<RequestOutcome> {
    // One state for the whole request, even if the CellSet changes meanwhile.
    const state = this.options.state();
    const plan = planRoute(info, state, this.options.namespaceLabels);
    switch (plan.kind) {
      case 'reject':
        return this.refuse(response, refusal(plan.status, 'rejected'));
      case 'control-plane':
        return this.toControlPlane(plan.reason, request, response, impersonation, abortOnClose(response));
      case 'all-cells':
        if (plan.info.verb === 'deletecollection')
          return this.deleteCollection(state!, plan.placement, request, response, impersonation);
        if (plan.info.verb === 'list')
          return this.list(plan.info, plan.placement, state!, request, response, impersonation);
        if (plan.info.verb === 'watch')
          return this.watch(plan.info, plan.placement, request, response, impersonation);
        // A PUT or PATCH of a whole collection: kube-apiserver has no such route either.
        return this.refuse(
          response,
          refusal(
            methodNotAllowed(`${plan.info.verb} of a ${plan.info.resource} collection is not allowed`),
            'bad-verb',
          ),
        );
      case 'name-in-body':
        return this.create(plan.info, state!, request, response, impersonation);
      case 'object':
        return this.object(plan, request, response, impersonation);
      case 'cell-made':
        return this.cellMade.serve(plan, request, response, impersonation);
    }
  }

  /** What cell-made collections show of owner uids (see OwnerUids); nothing for cellular ones. */
  private ownerView(placement: Placement): { ownerUids?: OwnerUids } {
    return placement === 'anywhere' && this.options.ownerUids ? { ownerUids: this.options.ownerUids } : {};
  }

  /** A collection source's client: a live cell's, or the control plane's (see CONTROL_PLANE_SOURCE). */
  private readonly source = (id: string): KubeClient | undefined =>
    id === CONTROL_PLANE_SOURCE ? this.options.controlPlane : this.options.cell(id);

  /** Sends the request on to the control plane as the caller (its body as read, when it was) and relays it. */
  private async toControlPlane(
    reason: string,
    request: ClientRequest,
    response: ClientResponse,
    impersonation: Impersonation,
    signal: AbortSignal,
    body?: BufferedBody,
  ): Promise<RequestOutcome> {
    const upstream = await sendUpstream(this.options.controlPlane, request, impersonation, signal, body);
    await relay(upstream, response);
    return { code: upstream.statusCode, cell: 'control-plane', route: reason };
  }

  /** A create whose name is in the body: read it (or pick one for generateName), then route by it. */
  private async create(
    info: ResourceRequestInfo,
    state: RoutingState,
    request: ClientRequest,
    response: ClientResponse,
    impersonation: Impersonation,
  ): Promise<RequestOutcome> {
    const body = await readBody(request, this.maxBodyBytes);
    if (body === 'too-large')
      return this.refuse(response, refusal(requestEntityTooLarge(this.maxBodyBytes), 'too-large'));
    const contentType = request.headers['content-type'];
    const signal = abortOnClose(response);
    for (let attempt = 1; ; attempt++) {
      let name: string | undefined;
      let payload: BufferedBody = { bytes: body };
      let generated = false;
      try {
        const names = namesFromBody(contentType, body);
        name = names.name;
        if (!name && names.generateName) {
          // The router names the object itself, so it knows where it goes.
          name = generateName(names.generateName);
          generated = true;
          const named = withName(contentType, body, name);
          payload = { bytes: named.body, contentType: named.contentType };
        }
      } catch (error) {
        if (error instanceof BodyNameError)
          return this.refuse(response, refusal(badRequest(error.message), 'bad-body'));
        throw error;
      }
      if (!name) {
        const status = failure(
          422,
          'Invalid',
          'metadata.name: Required value: name or generateName is required',
        );
        return this.refuse(response, refusal(status, 'no-name'));
      }
      const plan = planRoute(info, state, this.options.namespaceLabels, name);
      // A name each apiserver has of its own (kube-root-ca.crt): the control plane's.
      if (plan.kind === 'control-plane')
        return {
          ...(await this.toControlPlane(plan.reason, request, response, impersonation, signal, payload)),
          name,
        };
      // A Pod or Event a client creates itself: in the ring's cell, as a cellular object would be.
      if (plan.kind === 'cell-made')
        return { ...(await this.cellMade.serve(plan, request, response, impersonation, payload)), name };
      if (plan.kind !== 'object') throw new Error(`a named create planned as ${plan.kind}`);
      const destination = await this.destination(plan, impersonation);
      if (destination.kind === 'backup') return this.refuse(response, restoringRefusal(plan, destination));
      if (destination.kind === 'refuse') return this.refuse(response, destination);
      await this.options.cellNamespaces?.ensure(destination.cell, info.namespace);
      const written = await cellWriteBody(
        plan.info,
        request.method,
        payload.contentType ?? contentType,
        payload.bytes,
        { id: destination.cell, client: destination.client },
        impersonation,
      );
      if ('status' in written)
        return this.refuse(response, refusal(written.status, 'bad-body', destination.cell));
      const upstream = await sendUpstream(
        destination.client,
        request,
        { ...impersonation, ...SHOWN_ANSWER },
        signal,
        { ...payload, bytes: written.bytes },
      );
      if (generated && upstream.statusCode === 409) {
        const text = await upstream.body.text();
        if (attempt < GENERATE_NAME_ATTEMPTS && parseStatus(text)?.reason === 'AlreadyExists') {
          this.options.logger.debug(
            { cell: destination.cell, namespace: info.namespace, name, attempt },
            'generated name taken; trying another',
          );
          continue;
        }
        sendJson(response, 409, text);
        return { ...outcomeOf(destination, 409), name };
      }
      await relay(upstream, response, true);
      return { ...outcomeOf(destination, upstream.statusCode), name };
    }
  }

  private async object(
    plan: ObjectPlan,
    request: ClientRequest,
    response: ClientResponse,
    impersonation: Impersonation,
  ): Promise<RequestOutcome> {
    const destination = await this.destination(plan, impersonation);
    if (destination.kind === 'refuse') return this.refuse(response, destination);
    if (destination.kind === 'backup') {
      const shown = structuredClone(destination.object);
      showObject(shown);
      sendJson(response, 200, shown);
      return outcomeOf(destination, 200);
    }
    // Updates and patches (server-side apply creates) need the namespace too; deletes and reads do not.
    if (plan.access === 'write' && plan.info.verb !== 'delete')
      await this.options.cellNamespaces?.ensure(destination.cell, plan.info.namespace);
    let body: BufferedBody | undefined;
    if (plan.access === 'write' && hasRequestBody(request)) {
      // An object from a list or watch through the router carries a composite resourceVersion: the cell
      // compares its own. Write bodies are read whole (kube-apiserver's 3 MiB cap) to find it.
      const bytes = await readBody(request, this.maxBodyBytes);
      if (bytes === 'too-large')
        return this.refuse(response, refusal(requestEntityTooLarge(this.maxBodyBytes), 'too-large'));
      const translated = cellVersionBody(request.headers['content-type'], bytes, destination.cell);
      if (translated && 'status' in translated)
        return this.refuse(response, { ...refusal(translated.status, 'stale-version', destination.cell) });
      const written = await cellWriteBody(
        plan.info,
        request.method,
        request.headers['content-type'],
        translated?.body ?? bytes,
        { id: destination.cell, client: destination.client },
        impersonation,
      );
      if ('status' in written)
        return this.refuse(response, refusal(written.status, 'bad-body', destination.cell));
      body = { bytes: written.bytes };
    }
    // Held dependents are orphaned, or deleted first, by cellfed's collector, which the finalizer waits for.
    const holdFor =
      plan.info.verb === 'delete' && plan.info.subresource === ''
        ? heldDependentsFinalizer(request.url ?? '/', body?.bytes)
        : undefined;
    if (holdFor)
      await holdForCollector(
        destination.client,
        objectPath(plan.info, plan.info.namespace, plan.info.name),
        impersonation,
        holdFor,
        abortOnClose(response),
      );
    // The object itself and its status are shown in their client view; other subresources (scale, a
    // Service's proxy) are not objects of the resource and stream through.
    const shown = plan.info.subresource === '' || plan.info.subresource === 'status';
    let upstream;
    try {
      upstream = await sendUpstream(
        destination.client,
        request,
        shown ? { ...impersonation, ...SHOWN_ANSWER } : impersonation,
        abortOnClose(response),
        body,
      );
    } catch (error) {
      // Its connection closed as it left: every object it held had moved (and its copies refuse writes).
      if (!response.headersSent && this.hasLeft(destination.cell))
        return this.refuse(response, cellLeftRefusal(plan, destination.cell));
      throw error;
    }
    if (plan.access !== 'write') await relay(upstream, response, shown);
    else if (!(await relayUnlessFenced(upstream, response, shown)))
      return this.refuse(response, fenceRefusal(plan, destination.cell, 'cell-fence', destination.routeCase));
    return outcomeOf(destination, upstream.statusCode);
  }

  /**
   * The routing rule carried out: old or new cell by the old copy's label, a fence, or — for a key whose
   * cell is Down — its backup until the backup is promoted.
   */
  private async destination(plan: ObjectPlan, impersonation: Impersonation): Promise<Destination> {
    const { decision, access, info } = plan;
    const routeCase = decision.case;
    let oldCopy: OldCopy | undefined;
    if (needsOldCopy(decision)) {
      try {
        oldCopy = await this.options.oldCopies.get(decision.oldCell, info, access);
      } catch (error) {
        if (this.hasLeft(decision.oldCell)) return cellLeftRefusal(plan, decision.oldCell);
        const status = serviceUnavailable(
          `cannot tell whether ${info.resource} "${info.name}" has moved: cell ${decision.oldCell}: ${errorMessage(error)}`,
          1,
        );
        return {
          ...refusal(status, 'old-copy-unreadable', decision.oldCell),
          routeCase,
          headers: RETRY_SOON,
        };
      }
    }
    const target = resolveTarget(decision, access, oldCopy);
    if (target.action === 'fence')
      return fenceRefusal(plan, target.cell, target.reason, routeCase, target.retryAfterSeconds);
    const client = this.options.cell(target.cell);
    if (!client) {
      if (this.hasLeft(target.cell)) return cellLeftRefusal(plan, target.cell);
      const status = serviceUnavailable(`cell ${target.cell} is not connected`, 1);
      return { ...refusal(status, 'cell-unavailable', target.cell), routeCase, headers: RETRY_SOON };
    }
    if (plan.failedOverFrom)
      return this.failover(plan, plan.failedOverFrom, client, target.cell, impersonation);
    return { kind: 'cell', client, cell: target.cell, route: target.reason, routeCase };
  }

  /**
   * Whether `cell` is no longer live in the routing state as it is now: the CellSet changed (a drained cell
   * left, a cell went Down) after this request was planned with it.
   */
  private hasLeft(cell: string): boolean {
    const now = this.options.state();
    return now !== undefined && !now.liveCells.includes(cell);
  }

  /** A key of a Down cell: the cell that took it over, or the backup it holds until promotion. */
  private async failover(
    plan: ObjectPlan,
    down: string,
    client: KubeClient,
    cell: string,
    impersonation: Impersonation,
  ): Promise<Destination> {
    const { info, access } = plan;
    const routeCase = plan.decision.case;
    let state: FailoverState;
    try {
      state = await failoverState(client, info, down, cell, impersonation);
    } catch (error) {
      const status = serviceUnavailable(
        `cannot tell whether ${info.resource} "${info.name}" of down cell ${down} is restored in cell ${cell}: ${errorMessage(error)}`,
        1,
      );
      return { ...refusal(status, 'backup-unreadable', cell), routeCase };
    }
    if (state.kind === 'refused')
      return { ...refusal(cellFailure(cell, state.code, state.body), 'backup-refused', cell), routeCase };
    if (state.kind !== 'backup') return { kind: 'cell', client, cell, route: 'failed-over', routeCase };
    const readable = access === 'read' && (info.subresource === '' || info.subresource === 'status');
    const fromBackup: FromBackup = {
      kind: 'backup',
      object: state.object,
      cell,
      route: 'failover-backup',
      routeCase,
    };
    return readable ? fromBackup : restoringRefusal(plan, fromBackup);
  }

  private async list(
    info: ResourceRequestInfo,
    placement: Placement,
    state: RoutingState,
    request: ClientRequest,
    response: ClientResponse,
    impersonation: Impersonation,
  ): Promise<RequestOutcome> {
    const protobuf = acceptsOnlyProtobuf(request.headers.accept);
    const headers = mergeHeaders(request, impersonation, protobuf);
    const outcome = await serveMergedList(
      {
        state,
        resource: { group: info.apiGroup, resource: info.resource },
        placement,
        ...this.ownerView(placement),
        namespaceLabels: this.options.namespaceLabels ?? (() => undefined),
        ...(this.options.namespaceDeleted ? { namespaceDeleted: this.options.namespaceDeleted } : {}),
        client: this.source,
        target: request.url ?? '/',
        headers,
        signal: abortOnClose(response),
        ...(protobuf ? { protobuf } : {}),
      },
      streamedBody(response, protobuf ? { contentType: PROTOBUF_MEDIA_TYPE } : {}),
    );
    if (outcome.status) return this.refuse(response, refusal(outcome.status, 'list-refused', 'all-cells'));
    return { code: outcome.code, cell: 'all-cells', route: 'merged-list' };
  }

  private async watch(
    info: ResourceRequestInfo,
    placement: Placement,
    request: ClientRequest,
    response: ClientResponse,
    impersonation: Impersonation,
  ): Promise<RequestOutcome> {
    const protobuf = acceptsOnlyProtobuf(request.headers.accept);
    const headers = mergeHeaders(request, impersonation, protobuf);
    // A copy is read in the form the watch's events take (a Table for kubectl get -w, protobuf).
    const includeObject = new URL(request.url ?? '/', 'http://router.invalid').searchParams.get(
      'includeObject',
    );
    const copyQuery = includeObject ? `?includeObject=${encodeURIComponent(includeObject)}` : '';
    const readCopy = async (cell: string, namespace: string, name: string) => {
      const client = this.options.cell(cell);
      if (!client) return undefined;
      const answer = await client.raw('GET', `${objectPath(info, namespace, name)}${copyQuery}`, {
        headers: { ...impersonation, accept: String(headers.accept) },
      });
      const bytes = Buffer.from(await answer.body.arrayBuffer());
      if (answer.statusCode !== 200) return undefined;
      return protobuf ? protobufObject(bytes) : (JSON.parse(bytes.toString('utf8')) as Record<string, never>);
    };
    const signal = abortOnClose(response);
    const outcome = await serveMergedWatch(
      {
        state: this.options.state,
        namespaceLabels: this.options.namespaceLabels ?? (() => undefined),
        client: this.source,
        target: request.url ?? '/',
        resource: { group: info.apiGroup, resource: info.resource },
        placement,
        ...this.ownerView(placement),
        headers,
        signal,
        readCopy,
        logger: this.options.logger,
        ...(protobuf ? { codec: PROTOBUF_WATCH } : {}),
      },
      streamedBody(response, {
        eventByEvent: true,
        ...(protobuf ? { contentType: `${PROTOBUF_MEDIA_TYPE};stream=watch` } : {}),
      }),
    );
    if (outcome.status) return this.refuse(response, refusal(outcome.status, 'watch-refused', 'all-cells'));
    return { code: outcome.code, cell: 'all-cells', route: 'merged-watch' };
  }

  private async deleteCollection(
    state: RoutingState,
    placement: Placement,
    request: ClientRequest,
    response: ClientResponse,
    impersonation: Impersonation,
  ): Promise<RequestOutcome> {
    const body = hasRequestBody(request) ? await readBody(request, this.maxBodyBytes) : undefined;
    if (body === 'too-large')
      return this.refuse(response, refusal(requestEntityTooLarge(this.maxBodyBytes), 'too-large'));
    const headers = mergeHeaders(request, impersonation);
    const merged = await deleteCollection(
      collectionSources(state, placement),
      this.source,
      request.url ?? '/',
      headers,
      body,
      abortOnClose(response),
    );
    sendJson(response, merged.code, merged.body);
    return { code: merged.code, cell: 'all-cells', route: 'fan-out' };
  }

  private refuse(response: ClientResponse, destination: Refusal): RequestOutcome {
    return sendRefusal(response, destination);
  }

  private finish(
    request: ClientRequest,
    info: RequestInfo | string,
    user: string | undefined,
    outcome: RequestOutcome,
    started: number,
    span: Span,
  ): void {
    endRequestSpan(span, { ...outcome, user });
    const seconds = (performance.now() - started) / 1000;
    this.options.logger.info(
      {
        ...logFields(request, info),
        ...(outcome.name ? { name: outcome.name } : {}),
        user,
        cell: outcome.cell || undefined,
        code: outcome.code,
        route: outcome.route,
        ...(outcome.routeCase ? { case: outcome.routeCase } : {}),
        ms: Math.round(seconds * 10_000) / 10,
      },
      'request',
    );
    const resource = typeof info === 'string' || !info.isResourceRequest ? undefined : info;
    this.options.metrics?.record({
      verb: typeof info === 'string' ? 'unknown' : info.verb,
      resource: resource ? `${resource.apiGroup}/${resource.resource}` : '',
      cell: outcome.cell,
      code: outcome.code,
      routeCase: outcome.routeCase ? String(outcome.routeCase) : '',
      fenced: outcome.fenced === true,
      seconds,
    });
  }
}

/**
 * Headers for requests whose answers the router reads and merges: JSON (protobuf for a client that takes
 * nothing else), uncompressed, as the caller.
 */
function mergeHeaders(
  request: ClientRequest,
  impersonation: Impersonation,
  protobuf = false,
): Record<string, string | string[]> {
  const headers = upstreamHeaders(request.headers, impersonation);
  headers.accept = protobuf ? PROTOBUF_MEDIA_TYPE : jsonAccept(request.headers.accept);
  delete headers['accept-encoding'];
  return headers;
}

/** The request's info, or why its target cannot be one (only origin-form paths are served). */
function requestInfo(request: ClientRequest): RequestInfo | string {
  const target = request.url ?? '/';
  if (!target.startsWith('/') || target.startsWith('//'))
    return `the request target ${JSON.stringify(target.slice(0, 200))} is not a path`;
  try {
    return parseRequestInfo(request.method ?? 'GET', target);
  } catch (error) {
    return `the request target does not parse: ${errorMessage(error)}`;
  }
}

/** The object a log line is about: the path's resource, namespace and name. */
function logFields(request: ClientRequest, info: RequestInfo | string): Record<string, string | undefined> {
  const method = request.method ?? 'GET';
  const http = request.httpVersion;
  if (typeof info === 'string' || !info.isResourceRequest)
    return { method, http, path: (request.url ?? '/').split('?')[0] };
  return {
    method,
    http,
    verb: info.verb,
    resource: info.subresource ? `${info.resource}/${info.subresource}` : info.resource,
    namespace: info.namespace || undefined,
    name: info.name || undefined,
  };
}

/**
 * The cell a request was planned with left the federation meanwhile: like a fenced write, the client
 * retries by itself and is routed with the CellSet as it is now.
 */
function cellLeftRefusal(plan: ObjectPlan, cell: string): Refusal {
  const status = tooManyRequests(
    `cell ${cell} left the federation while the request was routed; retry`,
    DEFAULT_RETRY_AFTER_SECONDS,
    plan.info.name,
  );
  return {
    kind: 'refuse',
    status,
    cell,
    route: 'cell-left',
    routeCase: plan.decision.case,
    headers: { 'retry-after': String(DEFAULT_RETRY_AFTER_SECONDS) },
  };
}

/**
 * A write to an object in the middle of a move: fenced by the router on the label it read, or by the cell
 * (`cell-fence`) when the move began after that reading. Clients retry it by themselves.
 */
function fenceRefusal(
  plan: ObjectPlan,
  cell: string,
  route: string,
  routeCase: number | undefined,
  retryAfterSeconds = DEFAULT_RETRY_AFTER_SECONDS,
): Refusal {
  const { info, decision } = plan;
  const status = tooManyRequests(
    decision.oldCell === decision.newCell
      ? `${info.resource} "${info.name}" is moving out of cell ${cell}; retry shortly`
      : `${info.resource} "${info.name}" is moving from cell ${decision.oldCell} to ${decision.newCell}; retry shortly`,
    retryAfterSeconds,
    info.name,
  );
  return {
    kind: 'refuse',
    status,
    cell,
    route,
    ...(routeCase === undefined ? {} : { routeCase }),
    fenced: true,
    headers: { 'retry-after': String(retryAfterSeconds) },
  };
}

/**
 * A write (or anything but a plain read) of an object whose backup is not promoted yet: retried by the client
 * as a fenced write is, until the backup controller has created the real object.
 */
function restoringRefusal(plan: ObjectPlan, destination: FromBackup): Refusal {
  const status = tooManyRequests(
    `${plan.info.resource} "${plan.info.name}" is being restored in cell ${destination.cell} from its backup (cell ${plan.failedOverFrom ?? ''} is down); retry shortly`,
    RESTORE_RETRY_AFTER_SECONDS,
    plan.info.name,
  );
  return {
    kind: 'refuse',
    status,
    cell: destination.cell,
    route: 'failover-restoring',
    ...(destination.routeCase === undefined ? {} : { routeCase: destination.routeCase }),
    fenced: true,
    headers: { 'retry-after': String(RESTORE_RETRY_AFTER_SECONDS) },
  };
}
