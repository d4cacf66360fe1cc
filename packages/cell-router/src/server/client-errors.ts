import type { Duplex } from 'node:stream';

import { writeStatusToSocket } from '../proxy/upgrade-relay.ts';
import { badRequest, failure, type KubeStatus } from '../status/kube-status.ts';

/**
 * What a caller gets for an HTTP/1.1 request Node's parser refuses before the router sees it (a malformed
 * request line or header, headers over the limit): a Kubernetes Status like every other refusal, instead of
 * Node's bare `400 Bad Request`. A connection already broken or mid-answer is only closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  writeStatusToSocket(socket, clientErrorStatus(error.code));
}

export function clientErrorStatus(code: string | undefined): KubeStatus {
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
