import type { Duplex } from 'node:stream';

import { writeStatusToSocket } from '../proxy/upgrade-relay.ts';
import { badRequest, failure, type KubeStatus } from '../status/kube-status.ts';

/** Sockets that have their answer: the parser reports every later read as an error too. */
const answered = new WeakSet<Duplex>();
/** How long an answered caller may go on sending (its body, say) before the connection is dropped. */
const LINGER_MS = 5_000;

/**
 * What a caller gets for an HTTP/1.1 request Node's parser refuses before the router sees it (a malformed
 * request line or header, headers over the limit, a method Node does not know): a Kubernetes Status like
 * every other refusal, instead of Node's bare `400 Bad Request`. The connection is then half-closed and what
 * the caller still sends is read and dropped for a while: closing a socket with unread data resets it, and
 * the caller could lose the answer. A connection already broken is only closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (answered.has(socket)) return;
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  writeStatusToSocket(socket, clientErrorStatus(error.code));
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

function clientErrorStatus(code: string | undefined): KubeStatus {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return failure(431, 'RequestHeaderFieldsTooLarge', 'the request headers are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADER_TIMEOUT':
      return failure(408, 'Timeout', 'the request did not arrive in time');
    default:
      return badRequest(`the request is not valid HTTP/1.1 (${code ?? 'unknown parse error'})`);
  }
}
