import { constants } from 'node:http2';
import { PROTOBUF } from '@cellfed/federation';

import type { StreamedAnswer } from '../collections/streamed-answer.ts';
import type { ClientRequest, ClientResponse } from '../server/client-request.ts';

/**
 * Whether a request has a body. HTTP/1.1 says so in its headers; an HTTP/2 stream may carry one without a
 * content-length, and says it has none by ending with its headers.
 */
export function hasRequestBody(request: ClientRequest): boolean {
  if ('stream' in request) return !request.stream.endAfterHeaders;
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

/** How much of an early-answered HTTP/2 body is read and dropped before the stream is reset instead. */
const MAX_DROPPED_BODY_BYTES = 16 * 1024 * 1024;

/**
 * A request whose body the router did not read to its end (it answered early: a 413, an apiserver's 403):
 * the rest is read and dropped, so that the caller finishes its upload and reads the whole answer, and the
 * connection (HTTP/1.1) carries the next request. On HTTP/2 a reset with NO_ERROR (RFC 9113 §8.1) would also
 * stop the caller, but nghttp2 sends a RST_STREAM ahead of the answer's DATA frames still queued, and Go's
 * client (kubectl, client-go) then reports the reset instead of the answer; so a stream is reset only once
 * more than {@link MAX_DROPPED_BODY_BYTES} have been dropped (a caller that never stops).
 */
export function releaseUnreadBody(request: ClientRequest): void {
  if (request.readableEnded) return;
  if (!('stream' in request)) {
    // After a pipe that ended early has let go of the request (it pauses the request as it unpipes).
    setImmediate(() => request.resume());
    return;
  }
  const stream = request.stream;
  if (stream.endAfterHeaders) return;
  let dropped = 0;
  request.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > MAX_DROPPED_BODY_BYTES && !stream.closed && !stream.destroyed)
      stream.close(constants.NGHTTP2_NO_ERROR);
  });
  setImmediate(() => request.resume());
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

/**
 * A streamed answer; a write waits while the client is not reading (backpressure), so a long list never
 * piles up in the router. Chunks are gathered up to 64 KiB per socket write: one write per event cost a
 * streaming list of 30k objects a write each. A watch (`watch`) shows its headers at once and flushes
 * whenever it has no event waiting, so an event is never held back for the next.
 */
export function streamedBody(
  response: ClientResponse,
  options: { watch?: boolean; contentType?: string } = {},
): StreamedAnswer {
  const batch = 64 * 1024;
  let pending: Buffer[] = [];
  let size = 0;
  const take = () => {
    const ready = Buffer.concat(pending, size);
    pending = [];
    size = 0;
    return ready;
  };
  return {
    start: (code) =>
      writeHead(response, code, { 'content-type': options.contentType ?? 'application/json' }, options.watch),
    write: async (chunk) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      pending.push(bytes);
      size += bytes.length;
      if (size >= batch) await writeNow(response, take());
    },
    flush: async () => {
      if (size > 0) await writeNow(response, take());
    },
    end: () => {
      if (!response.destroyed) response.end(take());
    },
    cut: () => {
      take();
      response.destroy();
    },
  };
}

/**
 * Whether the caller accepts protobuf objects and nothing the router could answer in JSON instead (no JSON,
 * no wildcard): such a list is asked of the cells, and answered, in protobuf.
 */
export function acceptsOnlyProtobuf(accept: string | undefined): boolean {
  const offers = (accept ?? '')
    .split(',')
    .map((offer) => offer.trim())
    .filter((offer) => offer !== '');
  const media = (offer: string) => offer.split(';')[0]!.trim().toLowerCase();
  const plainProtobuf = (offer: string) => media(offer) === PROTOBUF && !/;\s*as=/i.test(offer);
  return offers.some(plainProtobuf) && offers.every((offer) => media(offer) === PROTOBUF);
}

/** The caller's Accept without protobuf: the router merges JSON (clients that offer protobuf take JSON too). */
export function jsonAccept(accept: string | undefined): string {
  const offers = (accept ?? '')
    .split(',')
    .map((offer) => offer.trim())
    .filter((offer) => offer !== '' && !offer.startsWith(PROTOBUF));
  return offers.length > 0 ? offers.join(', ') : 'application/json';
}

/** Writes a chunk at once (a watch event), waiting while the client is not reading. */
async function writeNow(response: ClientResponse, chunk: string | Buffer): Promise<void> {
  const writable = response as unknown as NodeJS.WritableStream;
  if (writable.write(chunk)) return;
  // A client that stops reading and then goes away must not leave the writer waiting forever.
  await new Promise<void>((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.once('drain', done);
    response.once('close', done);
  });
}
