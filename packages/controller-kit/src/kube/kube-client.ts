import type { RequestOptions as HttpsRequestOptions } from 'node:https';
import { connect as connectTcp, isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';

import { KubeConfig } from '@kubernetes/client-node';
import { Agent, type Dispatcher } from 'undici';

import { realClock, type Clock } from '../clock.ts';
import { ControllerKitError, ControllerKitErrorCode, errorMessage } from '../errors.ts';
import { ApiError, type ApiStatus } from './api-error.ts';
import { watchEvents, type WatchEvent } from './watch-lines.ts';

type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  /** Sent as JSON unless `contentType` says otherwise (strings are sent as they are). */
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
  /** Until the response headers arrive. Default 30 s. */
  timeoutMs?: number;
}

export interface KubeClientOptions {
  userAgent?: string;
  /** Offer HTTP/2 (ALPN) to the apiserver. Default false. */
  http2?: boolean;
  /** When credentials were resolved (they are kept {@link CREDENTIALS_TTL_MS}). */
  clock?: Pick<Clock, 'now'>;
}

/**
 * How long resolved credentials are used before client-node is asked again: a router sends every proxied
 * request with them, and resolving costs a copy of the TLS material and headers each time. client-go reads a
 * token file again at most once a minute; an exec plugin's credential is cached by client-node by its expiry.
 */
export const CREDENTIALS_TTL_MS = 10_000;

const JSON_TYPE = 'application/json';

type ClientTls = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;
/** What every request is sent with: the TLS material, and authentication headers (never edited once made). */
interface Credentials {
  readonly tls: ClientTls;
  readonly headers: Readonly<Record<string, string>>;
}

/** What a request carries besides its method, URL and the pooled agent. */
interface DispatchInit {
  headers: Record<string, string | string[]>;
  body: Dispatcher.DispatchOptions['body'] | undefined;
  signal: AbortSignal | undefined;
  headersTimeout: number;
  bodyTimeout: number;
  /** Bytes of the answer's body read ahead of its reader (undici's default: 64 KiB). */
  highWaterMark?: number;
}

/**
 * One apiserver, reached the way its kubeconfig says. @kubernetes/client-node reads the kubeconfig and
 * produces credentials (client certificates, tokens, exec plugins); undici carries the requests over one
 * keep-alive connection pool per client (client-node 2.0 makes a new agent for every request). Watches
 * stream; the caller owns inactivity detection (see the informer's watchdog).
 */
export class KubeClient {
  readonly server: string;
  private readonly config: KubeConfig;
  private readonly userAgent: string;
  private readonly http2: boolean;
  private readonly clock: Pick<Clock, 'now'>;
  private agent: Agent | undefined;
  /** The credentials in use and when they were asked for (a failed resolution is not kept). */
  private resolved: { at: number; credentials: Promise<Credentials> } | undefined;

  constructor(config: KubeConfig, options: KubeClientOptions = {}) {
    const cluster = config.getCurrentCluster();
    if (!cluster?.server) {
      throw new ControllerKitError(
        ControllerKitErrorCode.CellCredentials,
        'kubeconfig has no current cluster with a server',
      );
    }
    this.config = config;
    this.server = cluster.server.replace(/\/+$/, '');
    this.userAgent = options.userAgent ?? 'cellfed-controller-kit';
    this.http2 = options.http2 ?? false;
    this.clock = options.clock ?? realClock;
  }

  /** From kubeconfig text (YAML or JSON), as kept in a cell's Secret. */
  static fromKubeconfig(text: string, options?: KubeClientOptions): KubeClient {
    const config = new KubeConfig();
    try {
      config.loadFromString(text);
    } catch (error) {
      throw new ControllerKitError(
        ControllerKitErrorCode.CellCredentials,
        `kubeconfig does not parse: ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
    return new KubeClient(config, options);
  }

  /** From a kubeconfig file, or the in-cluster service account when `path` is undefined and one exists. */
  static fromFile(path: string | undefined, options?: KubeClientOptions): KubeClient {
    const config = new KubeConfig();
    if (path) config.loadFromFile(path);
    else config.loadFromDefault();
    return new KubeClient(config, options);
  }

  /** Sends a request and returns the decoded JSON body (text if not JSON); a non-2xx answer throws {@link ApiError}. */
  async request<T>(method: Dispatcher.HttpMethod, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options, options.timeoutMs ?? 30_000, 30_000);
    const text = await response.body.text();
    if (response.statusCode >= 300) throw apiError(response.statusCode, text, `${method} ${path}`);
    if (text === '') return undefined as T;
    // /readyz and friends answer text/plain; everything else here is JSON.
    const type = String(response.headers['content-type'] ?? '');
    return (type.includes('json') ? JSON.parse(text) : text) as T;
  }

  /**
   * Opens a watch (`watch=1` is added) and resolves once the apiserver accepted it; the events then stream
   * until the server ends the watch or `signal` aborts. A refused watch throws {@link ApiError}.
   */
  async watch(path: string, options: RequestOptions = {}): Promise<AsyncIterable<WatchEvent>> {
    const response = await this.send(
      'GET',
      path,
      { ...options, query: { ...options.query, watch: 1 } },
      options.timeoutMs ?? 30_000,
      0,
    );
    if (response.statusCode !== 200) {
      throw apiError(response.statusCode, await response.body.text(), `watch ${path}`);
    }
    return watchEvents(response.body);
  }

  /**
   * Sends a request as it is and hands back the raw answer (status, headers, streaming body), for proxies:
   * nothing is decoded and an error status is not an exception. The client's credentials are added;
   * `headers` may add impersonation and must not carry the caller's own credentials.
   */
  async raw(
    method: Dispatcher.HttpMethod,
    pathAndQuery: string,
    options: {
      headers?: Record<string, string | string[]>;
      body?: Dispatcher.DispatchOptions['body'];
      signal?: AbortSignal;
      headersTimeoutMs?: number;
      /**
       * Bytes of the body read ahead of its reader: what a stream whose reader waits (a watch for a slow
       * client) holds besides what the reader has; undici's default, 64 KiB, when not given.
       */
      highWaterMark?: number;
    } = {},
  ): Promise<Dispatcher.ResponseData> {
    return this.dispatch(method, this.target(pathAndQuery), (own) => ({
      ...(options.highWaterMark === undefined ? {} : { highWaterMark: options.highWaterMark }),
      headers: { ...options.headers, ...own },
      body: options.body ?? null,
      signal: options.signal,
      headersTimeout: options.headersTimeoutMs ?? 30_000,
      // Watches and long logs stream for as long as the caller keeps them open.
      bodyTimeout: 0,
    }));
  }

  /**
   * Opens a connection of its own for an HTTP/1.1 upgrade (exec, attach, port-forward) and writes the request
   * head with this client's credentials added. The caller relays whatever the apiserver answers (101 or an
   * error Status) and then bytes both ways; the socket is the caller's to end.
   */
  async tunnel(
    method: string,
    pathAndQuery: string,
    headers: Record<string, string | string[]>,
  ): Promise<Duplex> {
    const { tls, headers: own } = await this.credentials();
    const url = new URL(this.server);
    // The head is checked whole before anything is sent: a header name or value that could end its line
    // (CR, LF) or hold a NUL would let whoever chose it write headers into a request sent as this client.
    const lines = [`${method} ${this.target(pathAndQuery).path} HTTP/1.1`, `host: ${url.host}`];
    if (!REQUEST_LINE.test(lines[0]!))
      throw new ControllerKitError(ControllerKitErrorCode.Transport, `${method}: not a valid request line`);
    for (const [name, value] of Object.entries({
      ...headers,
      ...own,
      'user-agent': headers['user-agent'] ?? this.userAgent,
    })) {
      for (const one of Array.isArray(value) ? value : [value]) lines.push(headerLine(name, one));
    }
    const secure = url.protocol === 'https:';
    const port = Number(url.port || (secure ? 443 : 80));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const socket = secure
      ? connectTls({ host, port, ...tls, servername: tls.servername ?? (isIP(host) ? undefined : host) })
      : connectTcp({ host, port });
    await new Promise<void>((resolve, reject) => {
      socket.once(secure ? 'secureConnect' : 'connect', () => resolve());
      socket.once('error', (error) =>
        reject(
          new ControllerKitError(
            ControllerKitErrorCode.Transport,
            `${method} ${this.server}${pathAndQuery.split('?')[0]}: ${errorMessage(error)}`,
            { cause: error },
          ),
        ),
      );
    });
    // Header values are byte strings, as undici writes them (a UTF-8 name travels as its bytes).
    socket.write(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
    return socket;
  }

  /**
   * Where a request for `pathAndQuery` goes: the server's origin, and the path under the server's own prefix
   * (none, or a proxy's) exactly as given. A URL would resolve `..` and send a proxied request for another
   * object than the one routed.
   */
  private target(pathAndQuery: string): { origin: string; path: string } {
    const server = new URL(this.server);
    return { origin: server.origin, path: server.pathname.replace(/\/$/, '') + pathAndQuery };
  }

  /** Closes the connection pool; requests in flight fail. */
  async close(): Promise<void> {
    const agent = this.agent;
    this.agent = undefined;
    await agent?.destroy();
  }

  private async send(
    method: Dispatcher.HttpMethod,
    path: string,
    options: RequestOptions,
    headersTimeout: number,
    bodyTimeout: number,
  ) {
    const url = new URL(this.server + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const body =
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body);
    return this.dispatch(method, { origin: url.origin, path: url.pathname + url.search }, (own) => ({
      headers: {
        ...own,
        accept: options.accept ?? JSON_TYPE,
        'user-agent': this.userAgent,
        ...(body === undefined ? {} : { 'content-type': options.contentType ?? JSON_TYPE }),
      },
      body,
      signal: options.signal,
      headersTimeout,
      bodyTimeout,
    }));
  }

  /**
   * The one place a request leaves: the pooled agent, this client's credentials (handed to `init`), and a
   * transport failure turned into a {@link ControllerKitError} (or the abort reason when aborted).
   */
  private async dispatch(
    method: Dispatcher.HttpMethod,
    target: { origin: string; path: string },
    init: (credentials: Readonly<Record<string, string>>) => DispatchInit,
  ): Promise<Dispatcher.ResponseData> {
    const { agent, headers } = await this.connection();
    const options = init(headers);
    try {
      // The agent's own request takes the path as it is (undici's request() would parse it as a URL).
      return await agent.request({ ...options, ...target, method });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      throw new ControllerKitError(
        ControllerKitErrorCode.Transport,
        `${method} ${target.origin}${target.path.split('?')[0]}: ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  /** TLS material is fixed per client; headers are resolved again after a while so tokens can refresh. */
  private async connection(): Promise<{ agent: Agent; headers: Readonly<Record<string, string>> }> {
    const { tls, headers } = await this.credentials();
    this.agent ??= new Agent({
      connect: { ...tls, keepAlive: true, keepAliveInitialDelay: 30_000 },
      keepAliveTimeout: 30_000,
      pipelining: 1,
      // HTTP/1.1 unless asked: undici's HTTP/2 client cost the router a third more latency per proxied
      // request (bench/results/router.json), and each watch holding a connection is what kube clients do.
      allowH2: this.http2,
    });
    return { agent: this.agent, headers };
  }

  /** The credentials resolved within the last {@link CREDENTIALS_TTL_MS}, shared by concurrent requests. */
  private credentials(): Promise<Credentials> {
    const now = this.clock.now();
    if (this.resolved && now - this.resolved.at < CREDENTIALS_TTL_MS) return this.resolved.credentials;
    const resolved = { at: now, credentials: this.resolveCredentials() };
    this.resolved = resolved;
    resolved.credentials.catch(() => {
      if (this.resolved === resolved) this.resolved = undefined;
    });
    return resolved.credentials;
  }

  /** The kubeconfig's TLS material and authentication headers, as client-node resolves them now. */
  private async resolveCredentials(): Promise<Credentials> {
    const options: HttpsRequestOptions = {};
    await this.config.applyToHTTPSOptions(options);
    const tls: ClientTls = {
      ...(options.ca ? { ca: options.ca } : {}),
      ...(options.cert ? { cert: options.cert } : {}),
      ...(options.key ? { key: options.key } : {}),
      ...(options.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: options.rejectUnauthorized }),
      ...(options.servername ? { servername: options.servername } : {}),
    };
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(options.headers ?? {})) {
      if (value !== undefined) headers[key.toLowerCase()] = String(value);
    }
    if (options.auth) headers.authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
    return { tls, headers };
  }
}

function apiError(statusCode: number, text: string, what: string): ApiError {
  let status: ApiStatus = { code: statusCode, message: text.slice(0, 500) };
  try {
    const parsed = JSON.parse(text) as ApiStatus;
    if (parsed && typeof parsed === 'object') status = parsed;
  } catch {
    // Not a Status (a proxy in between, say): keep the text as the message.
  }
  return new ApiError(statusCode, status, what);
}

/** A request line with nothing but a method, a target without spaces or controls, and the version. */
// eslint-disable-next-line no-control-regex
const REQUEST_LINE = /^[A-Z]+ [^\x00-\x20\x7f]+ HTTP\/1\.1$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** One header line of a raw request, or a throw for a name or value that is not one (see tunnel). */
export function headerLine(name: string, value: string): string {
  if (!HEADER_NAME.test(name) || !HEADER_VALUE.test(value))
    throw new ControllerKitError(
      ControllerKitErrorCode.Transport,
      `the header ${JSON.stringify(name.slice(0, 64))} has a name or value that cannot be sent`,
    );
  return `${name}: ${value}`;
}
