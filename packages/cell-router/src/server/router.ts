import { CELL_ROUTER_CONTROLLER, DEFAULT_CELLSET_NAME, DEFAULT_SECRET_NAMESPACE } from '@cellfed/api';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

import {
  CellPool,
  EventRecorder,
  QuotaDraw,
  RouterLeasePublisher,
  type KubeClient,
  readIfExists,
  ControlPlaneNamespaces,
} from '@cellfed/controller-kit';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { type KubeObject } from '@cellfed/federation';

import { AccessReviewer } from '../auth/access-reviewer.ts';
import { Authenticator } from '../auth/authenticator.ts';
import { ComponentUsers } from '../auth/component-users.ts';
import { RouterMetrics } from '../metrics/router-metrics.ts';

import { CellNamespaces } from '../proxy/cell-namespaces.ts';
import { answerClientError } from './client-errors.ts';
import { closeIdleSessions, keepHttp1ConnectionsAsKubeApiserver } from './idle-sessions.ts';
import { BodyBudget, type BodyBudgetOptions } from './body-budget.ts';
import { DEFAULT_WATCH_BUFFER, WatchBytesBudget } from '../collections/watch-buffer.ts';
import { CallerLimits, type CallerLimitsOptions } from './caller-limits.ts';
import { OldCopies } from '../destinations/old-copies.ts';
import { PromotionRequests } from '../destinations/promotion-requests.ts';
import { RouterHandler } from './router-handler.ts';
import { CellularKinds, type DiscoveredResource } from '../views/cellular-kinds.ts';
import { OwnerUids } from '../views/owner-uids.ts';
import { RoutingStateHolder } from '../routing/routing-state-holder.ts';
import { ResourceHistories } from '../history/resource-histories.ts';
import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { NodePortClaims } from '../proxy/node-port-claims.ts';

export interface RouterOptions {
  /** The router control plane, with the router's own identity (allowed to impersonate). */
  controlPlane: KubeClient;
  logger: Logger;
  registry: Registry;
  /** A span per request and per reconcile of the cell pool; none by default. */
  tracer?: Tracer;
  tls: {
    cert: string | Buffer;
    key: string | Buffer;
    /** CA of client certificates the router accepts; without one only bearer tokens authenticate. */
    clientCa?: string | Buffer;
  };
  cellSetName?: string;
  secretNamespace?: string;
  /** Where the router's own kubeconfig Secrets of the cells are; `secretNamespace` unless given. */
  credentialsNamespace?: string;
  /**
   * The user names cellfed's components call the cells as (its own, the controllers'), which the cells'
   * policies exempt: a caller by one, or impersonating one, is refused (403). Its own in each cell is asked
   * of the cell too (auth/component-users.ts).
   */
  componentCellUsers?: readonly string[];
  /** Of them, the one given as the router's own (`--router-cell-user`): a cell that says otherwise is logged. */
  routerCellUser?: string;
  /** This replica's name in its Lease (the pod name in a cluster). */
  identity: string;
  /** What one caller may hold open at once; none: no limit. */
  limits?: CallerLimitsOptions;
  /** The bytes of request bodies the router holds at once; none: no bound. */
  bodies?: BodyBudgetOptions;
  /** The bytes of cells' events every watch together holds for its client; none: each watch's own bound only. */
  watchBytes?: number;
  /** Client connections open at once; none: no cap. */
  maxConnections?: number;
}

/**
 * Bytes of a body read before its caller is authorized for the request (a SubjectAccessReview, cached):
 * nearly every object is smaller, so nearly no write costs a review, and a caller without the right costs
 * the router at most this much per request it may have in flight.
 */
const UNAUTHORIZED_BODY_BYTES = 64 * 1024;

/**
 * The router assembled: the cell pool (a client per cell), the routing state built from the CellSet, the
 * control plane's namespaces (for their shard-by label), and the HTTPS front.
 */
export class Router {
  readonly pool: CellPool;
  readonly state: RoutingStateHolder;
  readonly handler: RouterHandler;
  private readonly namespaces: ControlPlaneNamespaces;
  private readonly lease: RouterLeasePublisher;
  private readonly histories: ResourceHistories;
  private readonly options: RouterOptions;
  private server: Http2SecureServer | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(options: RouterOptions) {
    this.options = options;
    const log = options.logger;
    this.pool = new CellPool({
      controlPlane: options.controlPlane,
      logger: log,
      registry: options.registry,
      ...(options.tracer ? { tracer: options.tracer } : {}),
      ...(options.cellSetName ? { cellSetName: options.cellSetName } : {}),
      credentialsNamespace:
        options.credentialsNamespace ?? options.secretNamespace ?? DEFAULT_SECRET_NAMESPACE,
    });
    this.state = new RoutingStateHolder(log.child({ component: 'routing-state' }));
    // One Lease per replica says which CellSet generation it routes with: the rebalance controller moves
    // nothing until every live router has loaded the generation it acts on.
    this.lease = new RouterLeasePublisher({
      client: options.controlPlane,
      namespace: options.secretNamespace ?? DEFAULT_SECRET_NAMESPACE,
      cellSetName: options.cellSetName ?? DEFAULT_CELLSET_NAME,
      identity: options.identity,
      logger: log.child({ component: 'router-lease' }),
    });
    this.pool.cellSets.addHandler(() => {
      if (this.state.load(this.pool.cellSet())) void this.lease.publish(this.state.current()!.generation);
    });
    this.namespaces = new ControlPlaneNamespaces({
      controlPlane: options.controlPlane,
      logger: log,
      registry: options.registry,
    });
    // Namespaces this router saw deleted (and not made again): their objects may still be in the cells.
    const deletedNamespaces = new Set<string>();
    this.namespaces.onChange(({ type, name }) => {
      if (type === 'deleted') deletedNamespaces.add(name);
      else if (type === 'added') deletedNamespaces.delete(name);
    });
    const namespaceOf = (name: string) => this.namespaces.metadata(name);
    const cellNamespaces = new CellNamespaces({
      registry: options.registry,
      logger: log.child({ component: 'cell-namespaces' }),
      controlPlaneNamespace: namespaceOf,
      readControlPlaneNamespace: async (name) =>
        (
          await readIfExists<KubeObject>(
            options.controlPlane,
            `/api/v1/namespaces/${encodeURIComponent(name)}`,
          )
        )?.metadata,
    });
    this.pool.subscribe(cellNamespaces);
    // Its own name in every cell it engages, and the names it is given: no caller is served as one.
    const componentUsers = new ComponentUsers({
      configured: options.componentCellUsers ?? [],
      routerCellUser: options.routerCellUser,
      logger: log.child({ component: 'component-users' }),
    });
    this.pool.subscribe(componentUsers);
    const metrics = new RouterMetrics(options.registry);
    this.histories = new ResourceHistories({
      state: () => this.state.current(),
      client: (source) =>
        source === CONTROL_PLANE_SOURCE ? options.controlPlane : this.pool.get(source)?.client,
      logger: log.child({ component: 'history' }),
    });
    this.handler = new RouterHandler({
      authenticator: new Authenticator({
        controlPlane: options.controlPlane,
        onReview: () => metrics.reviewSent('tokenreview'),
      }),
      reviewer: new AccessReviewer({
        apiserver: options.controlPlane,
        onReview: () => metrics.reviewSent('subjectaccessreview'),
      }),
      ...(options.limits ? { limits: new CallerLimits(options.limits) } : {}),
      componentUsers,
      ...(options.bodies
        ? { bodies: { budget: new BodyBudget(options.bodies), unauthorizedBytes: UNAUTHORIZED_BODY_BYTES } }
        : {}),
      ...(options.watchBytes
        ? { watchBuffer: { ...DEFAULT_WATCH_BUFFER, budget: new WatchBytesBudget(options.watchBytes) } }
        : {}),
      controlPlane: options.controlPlane,
      cell: (id) => this.pool.get(id)?.client,
      state: () => this.state.current(),
      // Per listed item and watch event: only the labels are copied.
      namespaceLabels: (namespace) => this.namespaces.labels(namespace),
      namespaceDeleted: (namespace) => deletedNamespaces.has(namespace),
      oldCopies: new OldCopies({ client: (id) => this.pool.get(id)?.client }),
      promotions: new PromotionRequests({ logger: log.child({ component: 'promotion-requests' }) }),
      ownerUids: new OwnerUids(
        new CellularKinds(
          async (groupVersion) =>
            (
              await options.controlPlane.request<{ resources: DiscoveredResource[] }>(
                'GET',
                groupVersion.includes('/') ? `/apis/${groupVersion}` : `/api/${groupVersion}`,
              )
            ).resources,
          () => this.state.current()?.cellular,
        ),
        (cell, path) => {
          const client = this.pool.get(cell)?.client;
          return client ? readIfExists<KubeObject>(client, path) : Promise.resolve(undefined);
        },
      ),
      cellNamespaces,
      quota: new QuotaDraw({
        cells: () =>
          (this.state.current()?.liveCells ?? []).flatMap((id) => {
            const client = this.pool.get(id)?.client;
            return client ? [{ id, client }] : [];
          }),
        logger: log.child({ component: 'quota-draw' }),
      }),
      nodePorts: new NodePortClaims(
        options.controlPlane,
        options.secretNamespace ?? DEFAULT_SECRET_NAMESPACE,
        log.child({ component: 'node-ports' }),
      ),
      orphanings: new EventRecorder({
        client: options.controlPlane,
        controller: CELL_ROUTER_CONTROLLER,
        instance: options.identity,
        logger: log,
      }),
      metrics,
      histories: this.histories,
      ...(options.tracer ? { tracer: options.tracer } : {}),
      logger: log.child({ component: 'access' }),
    });
  }

  /** Ready when the CellSet is loaded and the namespace cache is filled. */
  readyCheck(): true | string {
    const state = this.state.readyCheck();
    if (state !== true) return state;
    return this.namespaces.hasSynced() || 'namespaces not listed yet';
  }

  /** Serves a new certificate from the next handshake on (a renewed TLS Secret). */
  updateServingCertificate(certificate: { cert: string; key: string }): void {
    const { clientCa } = this.options.tls;
    this.server?.setSecureContext({ ...certificate, ...(clientCa ? { ca: clientCa } : {}) });
  }

  /**
   * Serves until `signal` aborts. Resolves with the address once listening; {@link stopped} resolves once
   * everything it started has ended (the Lease deleted, the informers stopped).
   */
  async listen(host: string, port: number, signal: AbortSignal): Promise<AddressInfo> {
    this.running = Promise.all([this.pool.run(signal), this.namespaces.run(signal), this.lease.run(signal)]);
    const { tls } = this.options;
    // HTTP/2 and HTTP/1.1 by ALPN, as kube-apiserver offers them: client-go and kubectl multiplex their
    // requests and watches over one HTTP/2 connection; exec and port-forward upgrade HTTP/1.1 ones.
    const server = createSecureServer(
      {
        cert: tls.cert,
        key: tls.key,
        ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true } : {}),
        // Unverified certificates are not refused at the handshake: the request may still carry a token.
        rejectUnauthorized: false,
        allowHTTP1: true,
        // kube-apiserver's --http2-max-streams-per-connection default: every watch holds a stream.
        settings: { maxConcurrentStreams: 1000 },
      },
      this.handler.handle,
    );
    server.on('upgrade', (request, socket, head) => void this.handler.handleUpgrade(request, socket, head));
    closeIdleSessions(server);
    keepHttp1ConnectionsAsKubeApiserver(server);
    // Connections past this are refused at once: each costs the router its TLS and HTTP/2 state.
    if (this.options.maxConnections) server.maxConnections = this.options.maxConnections;
    server.on('clientError', answerClientError);
    const connections = new Set<Socket>();
    server.on('secureConnection', (socket: Socket) => {
      // Watch events are small writes that must leave at once (no Nagle delay on the HTTP/1.1 fallback).
      socket.setNoDelay(true);
      connections.add(socket);
      socket.once('close', () => connections.delete(socket));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    signal.addEventListener(
      'abort',
      () => {
        server.close();
        this.histories.close();
        for (const socket of connections) socket.destroy();
      },
      { once: true },
    );
    return server.address() as AddressInfo;
  }

  async stopped(): Promise<void> {
    await this.running;
  }
}

/** One object read with the router's own identity; undefined when not found (or the cell is not engaged). */
