import type { KubeClient } from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import { PROTOBUF, PROTOBUF_WATCH_STREAM, cellOwnObjectName } from '@cellfed/federation';
import type { WatchBufferLimits } from '../collections/watch-buffer.ts';

import { serveMergedList } from '../collections/merged-list.ts';
import { asksControlPlane } from '../collections/own-objects.ts';
import { serveMergedWatch } from '../collections/merged-watch.ts';
import { protobufObject } from '../collections/protobuf-watch.ts';
import { PROTOBUF_WATCH } from '../collections/watch-codec.ts';
import { requestObjectPath } from '../request/object-path.ts';
import type { ResourceRequestInfo } from '../request/request-info.ts';
import {
  collectionSources,
  type NamespaceLabels,
  type Placement,
  type RoutingState,
} from '../routing/route-plan.ts';
import type { OwnerUids } from '../views/owner-uids.ts';
import { acceptsOnlyProtobuf, hasRequestBody, jsonAccept, streamedBody } from './client-exchange.ts';
import { deleteCollection } from './delete-collection.ts';
import { refusal } from '../routing/destination.ts';
import { sendRefusal } from './send-refusal.ts';
import { sendJson } from './forward.ts';
import { upstreamHeaders } from './headers.ts';
import { withSelector, withoutFollowers } from './without-followers.ts';
import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import type { HistoryResource, ResourceHistories } from '../history/resource-histories.ts';
import type { ResourceHistory } from '../history/resource-history.ts';
import { type ClientRequest } from '../server/client-request.ts';
import { type RequestOutcome } from '../server/request-outcome.ts';
import { type Impersonation } from '../auth/impersonation.ts';
import type { RequestScope } from '../server/request-scope.ts';

export interface CollectionRequestsOptions {
  readonly state: () => RoutingState | undefined;
  /** The client of a live cell, or of the control plane for CONTROL_PLANE_SOURCE. */
  readonly source: (id: string) => KubeClient | undefined;
  /** The client of an engaged cell. */
  readonly cell: (id: string) => KubeClient | undefined;
  readonly namespaceLabels?: NamespaceLabels | undefined;
  readonly namespaceDeleted?: ((namespace: string) => boolean) | undefined;
  readonly ownerUids?: OwnerUids | undefined;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
  /** The router's histories of resources: a watch's joined cells are followed. */
  readonly histories?: ResourceHistories | undefined;
  /** What each watch holds for its client (collections/watch-buffer.ts); none: the defaults, no shared budget. */
  readonly watchBuffer?: WatchBufferLimits | undefined;
}

/**
 * Requests for a whole collection, served from every cell that holds part of it: a list merged into one,
 * a watch of every cell as one stream, a delete of the collection in each.
 */
export class CollectionRequests {
  private readonly options: CollectionRequestsOptions;

  constructor(options: CollectionRequestsOptions) {
    this.options = options;
  }

  async list(
    info: ResourceRequestInfo,
    placement: Placement,
    state: RoutingState,
    scope: RequestScope,
    history?: ResourceHistory,
  ): Promise<RequestOutcome> {
    const { request, response, impersonation } = scope;
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
        client: this.options.source,
        target: request.url ?? '/',
        ...(info.namespace ? { namespace: info.namespace } : {}),
        headers,
        signal: scope.signal,
        ...(protobuf ? { protobuf } : {}),
        ...(history ? { history } : {}),
      },
      streamedBody(response, protobuf ? { contentType: PROTOBUF } : {}),
    );
    if (outcome.status) return sendRefusal(response, refusal(outcome.status, 'list-refused', 'all-cells'));
    return { code: outcome.code, cell: 'all-cells', route: 'merged-list' };
  }

  async watch(
    info: ResourceRequestInfo,
    placement: Placement,
    scope: RequestScope,
    history?: ResourceHistory,
  ): Promise<RequestOutcome> {
    const { request, response, impersonation } = scope;
    const protobuf = acceptsOnlyProtobuf(request.headers.accept);
    const headers = mergeHeaders(request, impersonation, protobuf);
    // A copy is read in the form the watch's events take (a Table for kubectl get -w, protobuf).
    const includeObject = new URL(request.url ?? '/', 'http://router.invalid').searchParams.get(
      'includeObject',
    );
    const copyQuery = includeObject ? `?includeObject=${encodeURIComponent(includeObject)}` : '';
    const { histories } = this.options;
    const resource = historyResource(info, placement);
    const readCopy = async (cell: string, namespace: string, name: string) => {
      const client = this.options.cell(cell);
      if (!client) return undefined;
      const answer = await client.raw('GET', `${requestObjectPath(info, namespace, name)}${copyQuery}`, {
        headers: { ...impersonation, accept: String(headers.accept) },
      });
      const bytes = Buffer.from(await answer.body.arrayBuffer());
      if (answer.statusCode !== 200) return undefined;
      return protobuf ? protobufObject(bytes) : (JSON.parse(bytes.toString('utf8')) as Record<string, never>);
    };
    const outcome = await serveMergedWatch(
      {
        state: this.options.state,
        namespaceLabels: this.options.namespaceLabels ?? (() => undefined),
        client: this.options.source,
        target: request.url ?? '/',
        resource: { group: info.apiGroup, resource: info.resource },
        placement,
        ...this.ownerView(placement),
        headers,
        signal: scope.signal,
        readCopy,
        logger: this.options.logger,
        ...(protobuf ? { codec: PROTOBUF_WATCH } : {}),
        ...(history ? { history, followSources: () => histories!.of(resource) } : {}),
        ...(this.options.watchBuffer ? { buffer: this.options.watchBuffer } : {}),
      },
      streamedBody(response, {
        watch: true,
        ...(protobuf ? { contentType: PROTOBUF_WATCH_STREAM } : {}),
      }),
    );
    if (outcome.status) return sendRefusal(response, refusal(outcome.status, 'watch-refused', 'all-cells'));
    return { code: outcome.code, cell: 'all-cells', route: 'merged-watch' };
  }

  async deleteCollection(
    info: ResourceRequestInfo,
    state: RoutingState,
    placement: Placement,
    scope: RequestScope,
  ): Promise<RequestOutcome> {
    const { request, response, impersonation } = scope;
    const { maxBodyBytes } = this.options;
    const body = hasRequestBody(request) ? await scope.body.read(maxBodyBytes) : undefined;
    if (body && !Buffer.isBuffer(body)) return sendRefusal(response, body);
    const resource = { group: info.apiGroup, resource: info.resource };
    const path = withoutFollowers(request.url ?? '/');
    // Of what each apiserver makes for itself (kube-root-ca.crt), the control plane's copy is the one clients
    // see, and is deleted as one apiserver's `delete configmaps --all` deletes its own; the cells keep theirs.
    // Of a ring-placed resource, nothing else in the control plane is the federation's.
    const own = cellOwnObjectName(resource, info.namespace);
    const sources = collectionSources(state, placement, resource).filter(
      (source) => source !== CONTROL_PLANE_SOURCE || asksControlPlane(resource, placement, info.namespace),
    );
    const sourcePath = (source: string) => {
      if (own === undefined) return path;
      if (source !== CONTROL_PLANE_SOURCE)
        return withSelector(path, 'fieldSelector', `metadata.name!=${own}`);
      return placement === 'ring' ? withSelector(path, 'fieldSelector', `metadata.name=${own}`) : path;
    };
    const merged = await deleteCollection(
      sources,
      this.options.source,
      sourcePath,
      mergeHeaders(request, impersonation),
      body,
      scope.signal,
    );
    sendJson(response, merged.code, merged.body);
    return { code: merged.code, cell: 'all-cells', route: 'fan-out' };
  }

  /** What cell-made collections show of owner uids (see OwnerUids); nothing for cellular ones. */
  private ownerView(placement: Placement): { ownerUids?: OwnerUids } {
    return placement === 'anywhere' && this.options.ownerUids ? { ownerUids: this.options.ownerUids } : {};
  }
}

/** The resource a request is of, as the histories key it. */
export function historyResource(info: ResourceRequestInfo, placement: Placement): HistoryResource {
  return { group: info.apiGroup, version: info.apiVersion, resource: info.resource, placement };
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
  headers.accept = protobuf ? PROTOBUF : jsonAccept(request.headers.accept);
  delete headers['accept-encoding'];
  return headers;
}
