import type { Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { errorMessage } from '@cellfed/controller-kit';

import type { RouterMetrics } from '../metrics/router-metrics.ts';
import { parseRequestInfo, type RequestInfo } from '../request/request-info.ts';
import { resourceVersionProblem } from '../request/resource-version-query.ts';
import { endRequestSpan } from '../tracing/request-span.ts';
import { type ClientRequest } from './client-request.ts';
import { type RequestOutcome } from './request-outcome.ts';

/**
 * The request's info, or why its target cannot be served: only origin-form paths, and a `resourceVersion`
 * query an apiserver can parse (resource-version-query.ts).
 */
export function requestInfo(request: ClientRequest): RequestInfo | string {
  const target = request.url ?? '/';
  if (!target.startsWith('/') || target.startsWith('//'))
    return `the request target ${JSON.stringify(target.slice(0, 200))} is not a path`;
  let info: RequestInfo;
  try {
    info = parseRequestInfo(request.method ?? 'GET', target);
  } catch (error) {
    return `the request target does not parse: ${errorMessage(error)}`;
  }
  return resourceVersionProblem(info) ?? info;
}

/** The object a log line is about: the path's resource, namespace and name. */
export function logFields(
  request: ClientRequest,
  info: RequestInfo | string,
): Record<string, string | undefined> {
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

/** A request slower than this is logged at info whatever its answer (watches and upgrades last: never). */
const SLOW_SECONDS = 1;

/**
 * The level of a request's access-log line, as kube-apiserver logs requests: a refusal, an error or a slow
 * answer at info, every other request at debug (`--log-level debug` shows them all). A line per request at
 * info took a fifth of the router's CPU under load in the benchmark's profile; metrics count every request.
 */
export function accessLogLevel(info: RequestInfo | string, code: number, seconds: number): 'info' | 'debug' {
  if (code >= 400 || code < 100) return 'info';
  const longRunning = code === 101 || (typeof info !== 'string' && info.verb === 'watch');
  return !longRunning && seconds >= SLOW_SECONDS ? 'info' : 'debug';
}

/** One request's end: its span closed, one access-log line with the cell and the object, its metrics. */
export function recordRequest(
  sinks: { logger: Logger; metrics?: RouterMetrics | undefined },
  request: ClientRequest,
  info: RequestInfo | string,
  user: string | undefined,
  outcome: RequestOutcome,
  started: number,
  span: Span,
): void {
  endRequestSpan(span, { ...outcome, user });
  const seconds = (performance.now() - started) / 1000;
  const level = accessLogLevel(info, outcome.code, seconds);
  if (sinks.logger.isLevelEnabled(level))
    sinks.logger[level](
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
  sinks.metrics?.record({
    verb: typeof info === 'string' ? 'unknown' : info.verb,
    resource: resource ? `${resource.apiGroup}/${resource.resource}` : '',
    cell: outcome.cell,
    code: outcome.code,
    routeCase: outcome.routeCase ? String(outcome.routeCase) : '',
    fenced: outcome.fenced === true,
    seconds,
  });
}
