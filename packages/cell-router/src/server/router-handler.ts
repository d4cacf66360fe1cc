import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

import { NOOP_TRACER, type KubeClient } from '@cellfed/controller-kit';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';

import { AccessReviewer } from '../auth/access-reviewer.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ComponentUsers } from '../auth/component-users.ts';
import type { Authorize } from '../auth/request-authorization.ts';
import type { RouterMetrics } from '../metrics/router-metrics.ts';
import type { RequestInfo, ResourceRequestInfo } from '../request/request-info.ts';
import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { planRoute, type NamespaceLabels, type Placement, type RoutingState } from '../routing/route-plan.ts';
import { badRequest, methodNotAllowed } from '../status/kube-status.ts';
import type { OwnerUids } from '../views/owner-uids.ts';
import type { CallerLimits } from './caller-limits.ts';
import { exchange, type ExchangeOptions } from './request-exchange.ts';
import { CellMadeRequests } from '../proxy/cell-made-requests.ts';
import type { CellNamespaces } from '../proxy/cell-namespaces.ts';
import { abortResponse, hasRequestBody, releaseUnreadBody } from '../proxy/client-exchange.ts';
import { changesShardBy } from '../proxy/shard-by-writes.ts';
import { CollectionRequests, historyResource } from '../proxy/collection-requests.ts';
import type { ResourceHistory } from '../history/resource-history.ts';
import type { ResourceHistories } from '../history/resource-histories.ts';
import { outcomeOf, refusal, type Destination, type Refusal } from '../routing/destination.ts';
import { sendRefusal } from '../proxy/send-refusal.ts';
import { MAX_BODY_BYTES } from '../proxy/forward.ts';
import { NamedCreates } from '../proxy/named-creates.ts';
import { CellMadeDestinations } from '../destinations/cell-made-destinations.ts';
import { ObjectDestinations } from '../destinations/object-destinations.ts';
import { restoringRefusal, type ObjectPlan } from '../routing/object-refusals.ts';
import { ObjectRequests } from '../proxy/object-requests.ts';
import type { OldCopies } from '../destinations/old-copies.ts';
import type { PromotionRequests } from '../destinations/promotion-requests.ts';
import { toControlPlane } from '../proxy/to-control-plane.ts';
import { readyControlPlaneDelete, type OrphaningRecorder } from '../proxy/control-plane-deletes.ts';
import { relayUpgrade, writeStatusToSocket } from '../proxy/upgrade-relay.ts';
import type { QuotaDrawing } from '../proxy/quota-draws.ts';
import type { NodePortClaims } from '../proxy/node-port-claims.ts';
import { isUpgradable } from '../routing/upgrades.ts';
import { type ClientRequest, type ClientResponse } from './client-request.ts';
import { type RequestOutcome } from './request-outcome.ts';
import { type Impersonation } from '../auth/impersonation.ts';
import { requestScope, type RequestScope } from './request-scope.ts';
import type { BodyHolding } from './request-body.ts';
import type { WatchBufferLimits } from '../collections/watch-buffer.ts';

export interface RouterHandlerOptions {
  authenticator: Pick<Authenticator, 'authenticate'>;
  /**
   * Decides what callers may do, by the control plane's RBAC (SubjectAccessReviews, cached): the
   * impersonations they ask for, and their requests before the router acts for them as itself. Default:
   * one of its own against `controlPlane`.
   */
  reviewer?: Pick<AccessReviewer, 'allowed'>;
  /** What one caller may hold open at once (429 past it); none: no limit. */
  limits?: CallerLimits;
  /** The names cellfed's components call the cells as: no caller is served as one (403). */
  componentUsers?: Pick<ComponentUsers, 'has'>;
  /** How request bodies are held: a budget (429 past it), and how much is read before authorization. */
  bodies?: BodyHolding;
  /** What each watch holds for its client, and the budget every watch shares (collections/watch-buffer.ts). */
  watchBuffer?: WatchBufferLimits;
  controlPlane: KubeClient;
  /** The client of an engaged cell. */
  cell: (id: string) => KubeClient | undefined;
  state: () => RoutingState | undefined;
  namespaceLabels?: NamespaceLabels;
  /** Whether the control plane deleted the namespace (see MergedListRequest.namespaceDeleted). */
  namespaceDeleted?: (namespace: string) => boolean;
  oldCopies: OldCopies;
  /** Asks the backup controller to promote first a Down cell's key a client waits to write; none: it waits. */
  promotions?: PromotionRequests;
  /**
   * The uids clients know in the owner references cells' controllers set on what they make (a ReplicaSet's
   * to its moved Deployment); none: shown as the cells have them.
   */
  ownerUids?: OwnerUids;
  /** Creates a control-plane namespace in a cell that does not have it yet, before a write into it. */
  cellNamespaces?: Pick<CellNamespaces, 'ensure'>;
  /**
   * Records an orphaning delete of a control-plane object for cellfed's collector
   * (proxy/control-plane-deletes.ts); none: such deletes go on as they come.
   */
  orphanings?: OrphaningRecorder;
  metrics?: RouterMetrics;
  /** A server span per request, the parent of what the router sends on; none by default. */
  tracer?: Tracer;
  logger: Logger;
  maxBodyBytes?: number;
  /** The router's histories of resources (history/resource-histories.ts); none: watches in arrival order. */
  histories?: ResourceHistories;
  /** Moves unused quota share into a cell whose quota admission refused a write (proxy/quota-draws.ts). */
  quota?: QuotaDrawing;
  /** Claims Services' node ports in the control plane, so that no two cells give out the same one. */
  nodePorts?: NodePortClaims;
}

/**
 * One request, start to end: who is calling, what it is about, where it goes (planned without I/O), then
 * carried out by what serves that plan — one object (object-requests.ts), a create named in its body
 * (named-creates.ts), a collection across cells (collection-requests.ts), an object the cells made
 * (cell-made-requests.ts), or the control plane. Every refusal is a Kubernetes Status; every request leaves
 * one access-log line with the cell and the object, and is counted in the metrics (access-log.ts).
 */
export class RouterHandler {
  private readonly options: RouterHandlerOptions;
  private readonly destinations: ObjectDestinations;
  private readonly objects: ObjectRequests;
  private readonly collections: CollectionRequests;
  private readonly cellMade: CellMadeRequests;
  private readonly cellMadeDestinations: CellMadeDestinations;
  private readonly creates: NamedCreates;
  private readonly exchangeOptions: ExchangeOptions;

  constructor(options: RouterHandlerOptions) {
    this.options = options;
    this.exchangeOptions = {
      authenticator: options.authenticator,
      reviewer: options.reviewer ?? new AccessReviewer({ apiserver: options.controlPlane }),
      limits: options.limits,
      componentUsers: options.componentUsers,
      bodies: options.bodies,
      tracer: options.tracer ?? NOOP_TRACER,
      logger: options.logger,
      metrics: options.metrics,
    };
    // Read through the options on each call, as the handler itself does.
    const state = () => this.options.state();
    const cell = (id: string) => this.options.cell(id);
    const { ownerUids, cellNamespaces, quota, nodePorts, logger } = options;
    const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
    this.destinations = new ObjectDestinations({
      state,
      cell,
      oldCopies: options.oldCopies,
      promotions: options.promotions,
    });
    this.objects = new ObjectRequests({
      destinations: this.destinations,
      cellNamespaces,
      maxBodyBytes,
      quota,
      nodePorts,
      logger,
    });
    this.collections = new CollectionRequests({
      state,
      source: this.source,
      cell,
      namespaceLabels: options.namespaceLabels,
      namespaceDeleted: options.namespaceDeleted,
      ownerUids,
      logger: options.logger,
      maxBodyBytes,
      histories: options.histories,
      watchBuffer: options.watchBuffer,
    });
    this.cellMadeDestinations = new CellMadeDestinations({ state, source: this.source });
    this.cellMade = new CellMadeRequests({
      ownerUids,
      cellNamespaces,
      maxBodyBytes,
      quota,
      logger,
    });
    this.creates = new NamedCreates({
      controlPlane: options.controlPlane,
      namespaceLabels: options.namespaceLabels,
      destinations: this.destinations,
      cellMade: this.cellMade,
      cellMadeDestinations: this.cellMadeDestinations,
      cellNamespaces,
      logger: options.logger,
      maxBodyBytes,
      quota,
      nodePorts,
    });
  }

  readonly handle = (request: ClientRequest, response: ClientResponse): Promise<void> =>
    exchange(
      this.exchangeOptions,
      request,
      {
        refuse: (destination) => sendRefusal(response, destination),
        // A request whose body was read whole is destroyed too: only one cut short means the caller left.
        callerGone: () => (request.destroyed && !request.complete) || response.destroyed,
        fail: (destination) => {
          if (!response.headersSent) return sendRefusal(response, destination);
          abortResponse(response);
          return outcomeOf(destination, destination.status.code);
        },
        finish: () => releaseUnreadBody(request),
      },
      (info, impersonation, _progress, authorize, admitted) =>
        this.serve(info, requestScope(request, response, impersonation, authorize, admitted)),
    );

  /**
   * exec, attach, port-forward and proxy: routed like any request to their object, then relayed as an
   * upgrade (proxy/upgrade-relay.ts). Any other request that asks for an upgrade is refused (400).
   */
  readonly handleUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const refuse = (destination: Refusal): RequestOutcome => {
      writeStatusToSocket(socket, destination.status, destination.headers);
      return outcomeOf(destination, destination.status.code);
    };
    return exchange(
      this.exchangeOptions,
      request,
      { refuse, callerGone: () => socket.destroyed, fail: refuse },
      async (info, impersonation, progress, authorize) => {
        if (!isUpgradable(info))
          return refuse(
            refusal(
              badRequest(
                'the cell router relays upgrades only for pods/exec, pods/attach, pods/portforward and the proxy subresources: send this request without the Upgrade header',
              ),
              'not-upgradable',
            ),
          );
        const destination = await this.upgradeDestination(info, impersonation, authorize);
        if (destination.kind === 'refuse') return refuse(destination);
        // Logged when the tunnel ends, with the apiserver's code (101 for an upgrade that took place).
        progress.outcome = { ...outcomeOf(destination, 101), route: `upgrade:${destination.route}` };
        const code = await relayUpgrade(destination.client, request, socket, head, impersonation);
        return { ...progress.outcome, code };
      },
    );
  };

  /** Where an upgrade goes: the one object it names, as any request to it (never a backup: it is a write). */
  private async upgradeDestination(
    info: RequestInfo,
    impersonation: Impersonation,
    authorize: Authorize,
  ): Promise<Exclude<Destination, { kind: 'backup' }>> {
    const plan = planRoute(info, this.options.state(), this.options.namespaceLabels);
    let destination: Destination;
    if (plan.kind === 'control-plane')
      destination = {
        kind: 'cell',
        client: this.options.controlPlane,
        cell: 'control-plane',
        route: plan.reason,
      };
    else if (plan.kind === 'object') destination = await this.destinations.of(plan, impersonation, authorize);
    else if (plan.kind === 'cell-made')
      destination = await this.cellMadeDestinations.of(plan, impersonation, authorize);
    else if (plan.kind === 'reject') destination = refusal(plan.status, 'rejected');
    else destination = refusal(badRequest('an upgrade request must name one object'), 'bad-upgrade');
    return destination.kind === 'backup'
      ? ((await authorize()) ?? restoringRefusal(plan as ObjectPlan, destination))
      : destination;
  }

  /** Forwards to the control plane; a delete of one object first as control-plane-deletes.ts says. */
  private async toControlPlane(
    info: RequestInfo,
    reason: string,
    scope: RequestScope,
  ): Promise<RequestOutcome> {
    const { request, response, impersonation, authorize } = scope;
    const { controlPlane, orphanings } = this.options;
    const signal = scope.signal;
    let body;
    if (orphanings && info.isResourceRequest && info.verb === 'delete' && info.name && !info.subresource) {
      const ready = await readyControlPlaneDelete(
        { controlPlane, recorder: orphanings, maxBodyBytes: this.options.maxBodyBytes ?? MAX_BODY_BYTES },
        info,
        request,
        (limit: number) => scope.body.read(limit),
        impersonation,
        authorize,
        signal,
      );
      if ('status' in ready) return sendRefusal(response, ready);
      body = ready.body;
    }
    if (isNamespaceWrite(info) && hasRequestBody(request)) {
      const bytes = await scope.body.read(this.options.maxBodyBytes ?? MAX_BODY_BYTES);
      if (!Buffer.isBuffer(bytes)) return sendRefusal(response, bytes);
      body = { bytes };
      // Re-keying a namespace moves everyone's objects in it: a right of its own (docs/routing.md).
      const stored = info.name ? this.options.namespaceLabels?.(info.name) : undefined;
      if (changesShardBy(request.method, request.headers['content-type'], bytes, stored)) {
        const refused = await scope.authorizeFor({
          ...info,
          verb: 'update',
          subresource: SHARD_BY_SUBRESOURCE,
        })();
        if (refused) return sendRefusal(response, refused);
      }
    }
    // One object the control plane makes for itself (or its status): not a watch or a whole collection.
    const ownObject =
      reason === 'cell-own' &&
      info.isResourceRequest &&
      info.name !== '' &&
      info.verb !== 'watch' &&
      (info.subresource === '' || info.subresource === 'status');
    return toControlPlane(
      controlPlane,
      reason,
      scope,
      body,
      ownObject ? { maxBodyBytes: this.options.maxBodyBytes ?? MAX_BODY_BYTES } : undefined,
    );
  }

  private async serve(info: RequestInfo, scope: RequestScope): Promise<RequestOutcome> {
    const { response, impersonation, authorize } = scope;
    // One state for the whole request, even if the CellSet changes meanwhile.
    const state = this.options.state();
    const plan = planRoute(info, state, this.options.namespaceLabels);
    // The resource's history is kept before its first object version is given out, so a watch can start there.
    const history =
      plan.kind === 'all-cells' ||
      plan.kind === 'object' ||
      plan.kind === 'name-in-body' ||
      plan.kind === 'cell-made'
        ? await this.historyOf(
            plan.info,
            plan.kind === 'all-cells' ? plan.placement : plan.kind === 'cell-made' ? 'anywhere' : 'ring',
            authorize,
          )
        : undefined;
    switch (plan.kind) {
      case 'reject':
        return sendRefusal(response, refusal(plan.status, 'rejected'));
      case 'control-plane':
        return this.toControlPlane(info, plan.reason, scope);
      case 'all-cells':
        if (plan.info.verb === 'deletecollection')
          return this.collections.deleteCollection(plan.info, state!, plan.placement, scope);
        if (plan.info.verb === 'list')
          return this.collections.list(plan.info, plan.placement, state!, scope, history);
        if (plan.info.verb === 'watch')
          return this.collections.watch(plan.info, plan.placement, scope, history);
        // A PUT or PATCH of a whole collection: kube-apiserver has no such route either.
        return sendRefusal(
          response,
          refusal(
            methodNotAllowed(`${plan.info.verb} of a ${plan.info.resource} collection is not allowed`),
            'bad-verb',
          ),
        );
      case 'name-in-body':
        return this.creates.serve(plan.info, state!, scope);
      case 'object':
        return this.objects.serve(plan, await this.destinations.of(plan, impersonation, authorize), scope);
      case 'cell-made':
        return this.cellMade.serve(
          plan,
          await this.cellMadeDestinations.of(plan, impersonation, authorize, scope.signal),
          scope,
        );
    }
  }

  /**
   * The history of the request's resource, begun as the router only for a caller allowed the request (nothing
   * is done as the router for anyone else); undefined without histories, or for a caller refused.
   */
  private async historyOf(
    info: ResourceRequestInfo,
    placement: Placement,
    authorize: Authorize,
  ): Promise<ResourceHistory | undefined> {
    const { histories } = this.options;
    if (!histories) return undefined;
    // A system namespace's collection is the control plane's part of the resource's one history.
    const historyPlacement =
      placement !== 'control-plane'
        ? placement
        : this.options.state()?.cellMade.has(info.apiGroup, info.resource)
          ? 'anywhere'
          : 'ring';
    const resource = historyResource(info, historyPlacement);
    // Kept already: nothing is done for this request. Begun only for a caller allowed the request.
    const kept = histories.current(resource);
    if (kept) return kept;
    if (await authorize()) return undefined;
    return histories.of(resource);
  }

  /** A collection source's client: a live cell's, or the control plane's (see CONTROL_PLANE_SOURCE). */
  private readonly source = (id: string): KubeClient | undefined =>
    id === CONTROL_PLANE_SOURCE ? this.options.controlPlane : this.options.cell(id);
}

/** The RBAC subresource whose `update` lets a caller set a namespace's `cellfed.io/shard-by` label. */
const SHARD_BY_SUBRESOURCE = 'shard-by';

/** A create, update or patch of a namespace itself (not its status or finalize). */
function isNamespaceWrite(info: RequestInfo): info is ResourceRequestInfo {
  return (
    info.isResourceRequest &&
    info.apiGroup === '' &&
    info.resource === 'namespaces' &&
    info.subresource === '' &&
    ['create', 'update', 'patch'].includes(info.verb)
  );
}
