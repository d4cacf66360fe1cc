import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

import { NOOP_TRACER, errorMessage, traceHeadersOf, type KubeClient } from '@cellfed/controller-kit';
import type { Span, Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';

import type { Authenticator } from '../auth/authenticator.ts';
import {
  authorizeImpersonation,
  impersonationHeaders,
  requestedImpersonation,
} from '../auth/impersonation.ts';
import type { UserInfo } from '../auth/user-info.ts';
import type { RouterMetrics } from '../metrics/router-metrics.ts';
import type { RequestInfo } from '../request/request-info.ts';
import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { planRoute, type NamespaceLabels, type RoutingState } from '../routing/route-plan.ts';
import {
  badRequest,
  forbidden,
  internalError,
  methodNotAllowed,
  unauthorized,
} from '../status/kube-status.ts';
import { startRequestSpan, type RequestOutcome } from '../tracing/request-span.ts';
import type { OwnerUids } from '../views/owner-uids.ts';
import { logFields, recordRequest, requestInfo } from './access-log.ts';
import { CellMadeRequests } from './cell-made-requests.ts';
import type { CellNamespaces } from './cell-namespaces.ts';
import {
  abortResponse,
  releaseUnreadBody,
  type ClientRequest,
  type ClientResponse,
} from './client-exchange.ts';
import { CollectionRequests } from './collection-requests.ts';
import {
  outcomeOf,
  refusal,
  type Destination,
  type Impersonation,
  type Refusal,
} from '../routing/destination.ts';
import { sendRefusal } from './send-refusal.ts';
import { MAX_BODY_BYTES, abortOnClose } from './forward.ts';
import { NamedCreates } from './named-creates.ts';
import { ObjectDestinations } from '../routing/object-destinations.ts';
import { restoringRefusal, type ObjectPlan } from '../routing/object-refusals.ts';
import { ObjectRequests } from './object-requests.ts';
import type { OldCopies } from '../routing/old-copies.ts';
import { toControlPlane } from './to-control-plane.ts';
import { relayUpgrade, writeStatusToSocket } from './upgrade-relay.ts';

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

type Admission = { user: UserInfo; impersonation: Impersonation } | { refusal: Refusal };

/**
 * One request, start to end: who is calling, what it is about, where it goes (planned without I/O), then
 * carried out by what serves that plan — one object (object-requests.ts), a create named in its body
 * (named-creates.ts), a collection across cells (collection-requests.ts), an object the cells made
 * (cell-made-requests.ts), or the control plane. Every refusal is a Kubernetes Status; every request leaves
 * one access-log line with the cell and the object, and is counted in the metrics (access-log.ts).
 */
export class RouterHandler {
  private readonly options: RouterHandlerOptions;
  private readonly tracer: Tracer;
  private readonly destinations: ObjectDestinations;
  private readonly objects: ObjectRequests;
  private readonly collections: CollectionRequests;
  private readonly cellMade: CellMadeRequests;
  private readonly creates: NamedCreates;

  constructor(options: RouterHandlerOptions) {
    this.options = options;
    this.tracer = options.tracer ?? NOOP_TRACER;
    // Read through the options on each call, as the handler itself does.
    const state = () => this.options.state();
    const cell = (id: string) => this.options.cell(id);
    const { ownerUids, cellNamespaces } = options;
    const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
    this.destinations = new ObjectDestinations({ state, cell, oldCopies: options.oldCopies });
    this.objects = new ObjectRequests({ destinations: this.destinations, cellNamespaces, maxBodyBytes });
    this.collections = new CollectionRequests({
      state,
      source: this.source,
      cell,
      namespaceLabels: options.namespaceLabels,
      namespaceDeleted: options.namespaceDeleted,
      ownerUids,
      logger: options.logger,
      maxBodyBytes,
    });
    this.cellMade = new CellMadeRequests({
      state,
      source: this.source,
      ownerUids,
      cellNamespaces,
      maxBodyBytes,
    });
    this.creates = new NamedCreates({
      controlPlane: options.controlPlane,
      namespaceLabels: options.namespaceLabels,
      destinations: this.destinations,
      cellMade: this.cellMade,
      cellNamespaces,
      logger: options.logger,
      maxBodyBytes,
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
      recordRequest(this.options, request, info, user, outcome, started, span);
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
        destination = await this.destinations.of(plan, admission.impersonation);
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
      recordRequest(this.options, request, info, user, outcome, started, span);
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
      const decided = await authorizeImpersonation(this.options.controlPlane, caller, asked);
      if ('denied' in decided) return { refusal: refusal(forbidden(decided.denied), 'impersonation-denied') };
      effective = decided.user;
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
        return toControlPlane(
          this.options.controlPlane,
          plan.reason,
          request,
          response,
          impersonation,
          abortOnClose(response),
        );
      case 'all-cells':
        if (plan.info.verb === 'deletecollection')
          return this.collections.deleteCollection(state!, plan.placement, request, response, impersonation);
        if (plan.info.verb === 'list')
          return this.collections.list(plan.info, plan.placement, state!, request, response, impersonation);
        if (plan.info.verb === 'watch')
          return this.collections.watch(plan.info, plan.placement, request, response, impersonation);
        // A PUT or PATCH of a whole collection: kube-apiserver has no such route either.
        return this.refuse(
          response,
          refusal(
            methodNotAllowed(`${plan.info.verb} of a ${plan.info.resource} collection is not allowed`),
            'bad-verb',
          ),
        );
      case 'name-in-body':
        return this.creates.serve(plan.info, state!, request, response, impersonation);
      case 'object':
        return this.objects.serve(plan, request, response, impersonation);
      case 'cell-made':
        return this.cellMade.serve(plan, request, response, impersonation);
    }
  }

  /** A collection source's client: a live cell's, or the control plane's (see CONTROL_PLANE_SOURCE). */
  private readonly source = (id: string): KubeClient | undefined =>
    id === CONTROL_PLANE_SOURCE ? this.options.controlPlane : this.options.cell(id);

  private refuse(response: ClientResponse, destination: Refusal): RequestOutcome {
    return sendRefusal(response, destination);
  }
}
