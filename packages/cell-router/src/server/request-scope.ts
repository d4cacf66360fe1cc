import type { Authorize } from '../auth/request-authorization.ts';
import type { Impersonation } from '../auth/impersonation.ts';
import { abortOnClose } from '../proxy/forward.ts';
import type { ClientRequest, ClientResponse } from './client-request.ts';
import type { RequestBody } from './request-body.ts';
import type { RequestInfo } from '../request/request-info.ts';

/**
 * What the front door learned of one request, read by every later stage instead of passed piece by piece
 * (kcp's request context): the caller's request and the answer to it, the headers that carry who the caller
 * is to the cells, and the one question of whether the caller may make this request at all.
 */
export interface RequestScope {
  readonly request: ClientRequest;
  readonly response: ClientResponse;
  readonly impersonation: Impersonation;
  /** Asks once whether the caller may make the request: before anything is done as the router. */
  readonly authorize: Authorize;
  /** Aborted when the caller leaves before its answer is written. */
  readonly signal: AbortSignal;
  /** The request's body, read under the router's body budget (server/request-body.ts). */
  readonly body: Pick<RequestBody, 'read'>;
  /** Whether the caller may make another request than this one: a check cellfed adds (a shard-by change). */
  readonly authorizeFor: (info: RequestInfo) => Authorize;
}

/** The scope of an HTTP request; its signal is made when a stage first reads it (most never do). */
export function requestScope(
  request: ClientRequest,
  response: ClientResponse,
  impersonation: Impersonation,
  authorize: Authorize,
  admitted: Pick<RequestScope, 'body' | 'authorizeFor'>,
): RequestScope {
  let signal: AbortSignal | undefined;
  return {
    request,
    response,
    impersonation,
    authorize,
    body: admitted.body,
    authorizeFor: admitted.authorizeFor,
    get signal() {
      return (signal ??= abortOnClose(response));
    },
  };
}
