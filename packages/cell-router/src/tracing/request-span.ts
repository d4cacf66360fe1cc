import { parentContextOf } from '@cellfed/controller-kit';
import { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';

import type { RequestInfo } from '../request/request-info.ts';
import type { RequestOutcome } from '../server/request-outcome.ts';
import { type ClientRequest } from '../server/client-request.ts';

/**
 * The server span of one request: a child of the caller's `traceparent` when it sends one, named like
 * kube-apiserver's own spans (verb and resource). What the router decided is added when the request ends.
 */
export function startRequestSpan(tracer: Tracer, request: ClientRequest, info: RequestInfo | string): Span {
  const method = request.method ?? 'GET';
  const resource = typeof info !== 'string' && info.isResourceRequest ? info : undefined;
  const name = resource
    ? `${resource.verb} ${resource.subresource ? `${resource.resource}/${resource.subresource}` : resource.resource}`
    : method;
  return tracer.startSpan(
    name,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': method,
        'url.path': (request.url ?? '/').split('?')[0]!.slice(0, 1024),
        ...(resource
          ? {
              'k8s.verb': resource.verb,
              'k8s.resource': resource.resource,
              ...(resource.apiGroup ? { 'k8s.api_group': resource.apiGroup } : {}),
              ...(resource.namespace ? { 'k8s.namespace.name': resource.namespace } : {}),
              ...(resource.name ? { 'k8s.object.name': resource.name } : {}),
            }
          : {}),
      },
    },
    parentContextOf(request.headers),
  );
}

/** Records the routing decision and the answer, and ends the span; a 5xx is an error. */
export function endRequestSpan(span: Span, outcome: RequestOutcome & { user?: string | undefined }): void {
  span.setAttributes({
    'http.response.status_code': outcome.code,
    'cellfed.route': outcome.route,
    ...(outcome.cell ? { 'cellfed.cell': outcome.cell } : {}),
    ...(outcome.routeCase ? { 'cellfed.route_case': outcome.routeCase } : {}),
    ...(outcome.fenced ? { 'cellfed.fenced': true } : {}),
    ...(outcome.name ? { 'k8s.object.name': outcome.name } : {}),
    ...(outcome.user ? { 'enduser.id': outcome.user } : {}),
  });
  if (outcome.code >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
