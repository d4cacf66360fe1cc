import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';

/** A client's request over HTTP/1.1 or HTTP/2: the front offers both (ALPN), as kube-apiserver does. */
export type ClientRequest = IncomingMessage | Http2ServerRequest;
export type ClientResponse = ServerResponse | Http2ServerResponse;

/**
 * Whether a request has a body. HTTP/1.1 says so in its headers; an HTTP/2 stream may carry one without a
 * content-length, and says it has none by ending with its headers.
 */
export function hasRequestBody(request: ClientRequest): boolean {
  if ('stream' in request) return !request.stream.endAfterHeaders;
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

/** Ends a response mid-way (an upstream failure after the headers went out): the client sees an error. */
export function abortResponse(response: ClientResponse): void {
  if ('stream' in response) response.stream.close(constants.NGHTTP2_INTERNAL_ERROR);
  else response.destroy();
}

/**
 * Starts the answer. `flush` sends the headers at once (a watch shows its 200 before its first event);
 * otherwise HTTP/1.1 sends them with the first body bytes. HTTP/2 sends them at once either way.
 */
export function writeHead(
  response: ClientResponse,
  code: number,
  headers: Record<string, string | string[] | number>,
  flush = false,
): void {
  if ('stream' in response) {
    response.writeHead(code, headers);
    return;
  }
  response.writeHead(code, headers);
  if (flush) response.flushHeaders();
}
