import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { type KubeClient } from '@cellfed/controller-kit';
import type { Dispatcher } from 'undici';
import { PROTOBUF, isFenceRefusal } from '@cellfed/federation';

import { mediaType } from '../request/object-name.ts';
import { isErrorWithoutStatus, statusFromText, type KubeStatus } from '../status/kube-status.ts';
import { showJson } from '../views/client-view.ts';
import { showProtobuf } from '../views/protobuf-view.ts';
import { showAnswerVersion, showProtobufAnswerVersion } from '../views/shown-version.ts';
import { hasRequestBody, writeHead } from './client-exchange.ts';
import { downstreamHeaders, upstreamHeaders } from './headers.ts';
import { type ClientRequest, type ClientResponse } from '../server/client-request.ts';

/** kube-apiserver's limit on a request body. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** A request body the router had to read (to find a name), possibly rewritten. */
export interface BufferedBody {
  readonly bytes: Buffer;
  readonly contentType?: string;
  /** The method it is sent with, when not the caller's (a Service patch sent as the update of its result). */
  readonly method?: 'POST' | 'PUT';
}

/**
 * Sends the caller's request on to an apiserver as the caller (impersonation headers), its body streamed
 * through or replaced by `body`. The answer comes back undecoded; abort with the caller's connection.
 */
export function sendUpstream(
  client: KubeClient,
  request: ClientRequest,
  impersonation: Record<string, string | string[]>,
  signal: AbortSignal,
  body?: BufferedBody,
  /** The path and query sent, when not the caller's own (a version in the cell's terms). */
  target = request.url ?? '/',
): Promise<Dispatcher.ResponseData> {
  const headers = upstreamHeaders(request.headers, impersonation, body?.bytes.length);
  if (body?.contentType) headers['content-type'] = body.contentType;
  return client.raw((body?.method ?? request.method ?? 'GET') as 'GET', target, {
    headers,
    body: body ? body.bytes : hasRequestBody(request) ? detachedBody(request) : null,
    signal,
  });
}

/**
 * The caller's body as the upstream request's: an apiserver that answers before reading it all (a 403) ends
 * the upstream request, and undici then destroys its body stream. That must not destroy the caller's
 * request too, which would reset the caller's connection before the answer reaches it.
 */
function detachedBody(request: ClientRequest): Readable {
  const body = new PassThrough();
  request.pipe(body);
  request.once('close', () => {
    if (!request.readableEnded) body.destroy(new Error('the caller went away mid-upload'));
  });
  return body;
}

/**
 * Streams an apiserver's answer to the caller: watches and logs flow until either side closes. An error
 * whose body is not a Status (plain text from a Go handler) is sent as one. With `showObjects`, a successful
 * JSON or protobuf answer is one object (or a list) and is read whole to be shown in its client view; with
 * `versionSource`, one object whose version is shown as clients see it (never a stream: not for watches).
 */
export async function relay(
  upstream: Dispatcher.ResponseData,
  response: ClientResponse,
  showObjects = false,
  /**
   * Instead of the client view of a JSON answer, this view (what the cells' controllers make: never a copy;
   * a protobuf answer then passes as it is).
   */
  viewJson?: (json: Buffer) => Promise<Buffer | string>,
  /**
   * The source (a cell, or the control plane) whose object this answer is: its resourceVersion is shown as
   * the one number of that object version (views/shown-version.ts).
   */
  versionSource?: string,
): Promise<void> {
  const type = String(upstream.headers['content-type'] ?? '');
  if (isErrorWithoutStatus(upstream.statusCode, type)) {
    const text = await upstream.body.text();
    sendStatus(response, statusFromText(upstream.statusCode, text));
    return;
  }
  const readable = upstream.statusCode < 300 && !upstream.headers['content-encoding'];
  const protobuf = mediaType(type) === PROTOBUF;
  const json = mediaType(type).includes('json');
  const read = showObjects || versionSource !== undefined;
  if (readable && ((read && protobuf) || ((read || viewJson) && json))) {
    const bytes = Buffer.from(await upstream.body.arrayBuffer());
    let shown: Buffer | string = bytes;
    if (protobuf) shown = showObjects ? showProtobuf(bytes) : bytes;
    else if (viewJson) shown = await viewJson(bytes);
    else if (showObjects) shown = showJson(bytes);
    if (versionSource !== undefined) {
      // Buffer.from would copy a Buffer: only a string (a view's output) is turned into one.
      const held = typeof shown === 'string' ? Buffer.from(shown) : shown;
      shown = protobuf
        ? showProtobufAnswerVersion(held, versionSource)
        : showAnswerVersion(held, versionSource);
    }
    const headers = downstreamHeaders(upstream.headers, requestPathOf(response));
    headers['content-length'] = String(Buffer.byteLength(shown));
    writeHead(response, upstream.statusCode, headers, false);
    response.end(shown);
    return;
  }
  // A stream of unknown length (a watch, followed logs) shows its headers at once; a sized answer sends
  // them with its body, in one write.
  writeHead(
    response,
    upstream.statusCode,
    downstreamHeaders(upstream.headers, requestPathOf(response)),
    upstream.headers['content-length'] === undefined,
  );
  await pipeline(upstream.body, response).catch(() => upstream.body.destroy());
}

/**
 * Relays a cell's answer to a write unless the cell refused it with the write fence policy: the object
 * started moving after the router read its label, and the caller gets the fence's answer instead (false).
 * Only a 403 Status is read whole to tell; everything else streams through as {@link relay} sends it.
 */
export async function relayUnlessFenced(
  upstream: Dispatcher.ResponseData,
  response: ClientResponse,
  showObjects = false,
  versionSource?: string,
): Promise<boolean> {
  const type = String(upstream.headers['content-type'] ?? '');
  if (upstream.statusCode !== 403 || isErrorWithoutStatus(upstream.statusCode, type)) {
    await relay(upstream, response, showObjects, undefined, versionSource);
    return true;
  }
  // JSON or protobuf: the policy's name is plain bytes in either.
  const bytes = Buffer.from(await upstream.body.arrayBuffer());
  if (isFenceRefusal(bytes.toString('latin1'))) return false;
  writeHead(
    response,
    upstream.statusCode,
    downstreamHeaders(upstream.headers, requestPathOf(response)),
    false,
  );
  response.end(bytes);
  return true;
}

/** An answer the router already holds in full (a merged or retried one). */
export function sendJson(
  response: ClientResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  writeHead(response, code, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

export function sendStatus(response: ClientResponse, status: KubeStatus, headers?: Record<string, string>) {
  sendJson(response, status.code, status, headers);
}

/** An aborter tied to the caller's connection: the upstream request ends when the caller goes. */
export function abortOnClose(response: ClientResponse): AbortSignal {
  const abort = new AbortController();
  // Only a caller that leaves early aborts (an abort builds a DOMException: not for every request).
  response.once('close', () => {
    if (!response.writableEnded) abort.abort();
  });
  return abort.signal;
}

/** The path the answer is for (its request's), to tell a proxied server's answer from an apiserver's own. */
function requestPathOf(response: ClientResponse): string {
  return (response as { req?: { url?: string } }).req?.url ?? '';
}
