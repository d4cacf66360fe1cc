import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

import type { KubeClient } from '@cellfed/controller-kit';

import { isErrorWithoutStatus, statusFromText, type KubeStatus } from '../status/kube-status.ts';
import { readAnswerBody, readAnswerHead, type AnswerHead } from './answer-head.ts';
import { upstreamHeaders } from './headers.ts';

/**
 * exec, attach, port-forward and proxy: the caller's upgrade request goes to the apiserver on a connection of
 * its own, as the caller. Nothing of the caller's reaches the apiserver before its 101: until then the
 * caller's socket is not read, and the bytes that came behind the request head (`head`) are held. A 101 is
 * relayed as it came and then bytes both ways, until either side closes. Any other answer is relayed as one
 * complete answer (a plain-text error from Go's HTTP server, such as `400 Bad Request` for a path it cannot
 * parse, as a Status) and both connections are closed, as kube-apiserver's upgrade-aware proxy does: what
 * the caller sent behind its request is never read, so it can never be served on the router's connection.
 * Resolves with the apiserver's code.
 */
export async function relayUpgrade(
  client: KubeClient,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  impersonation: Record<string, string | string[]>,
): Promise<number> {
  const headers = upstreamHeaders(request.headers, impersonation);
  headers.connection = 'Upgrade';
  headers.upgrade = request.headers.upgrade ?? '';
  // Not read until the 101: a caller's pipelined bytes stay in its socket.
  socket.pause();
  const upstream = await client.tunnel(request.method ?? 'GET', request.url ?? '/', headers);
  // Either side may fail at any time; its 'close' follows and ends the relay.
  const ignore = () => undefined;
  socket.on('error', ignore);
  upstream.on('error', ignore);
  // The caller gone before the answer came: the apiserver's connection is not needed any more.
  const callerGone = () => upstream.destroy();
  socket.once('close', callerGone);
  let answer: AnswerHead;
  try {
    answer = await readAnswerHead(upstream);
  } catch (error) {
    upstream.destroy();
    throw error;
  } finally {
    socket.off('close', callerGone);
  }
  if (answer.code !== 101) {
    const body = await readAnswerBody(upstream, answer);
    upstream.destroy();
    if (isErrorWithoutStatus(answer.code, answer.headers['content-type']))
      writeStatusToSocket(socket, statusFromText(answer.code, body.toString('utf8')));
    else writeAnswerToSocket(socket, answer.code, answer.headers['content-type'], body);
    return answer.code;
  }
  socket.write(Buffer.concat([answer.bytes, answer.rest]));
  if (head.length > 0) upstream.write(head);
  socket.pipe(upstream);
  upstream.pipe(socket);
  socket.resume();
  await new Promise<void>((resolve) => {
    const end = () => {
      socket.destroy();
      upstream.destroy();
      resolve();
    };
    if (socket.destroyed || upstream.destroyed) end();
    socket.once('close', end);
    upstream.once('close', end);
  });
  return answer.code;
}

/** A refusal on a socket whose request asked for an upgrade: a plain HTTP answer carrying the Status. */
export function writeStatusToSocket(
  socket: Duplex,
  status: KubeStatus,
  headers: Record<string, string> = {},
): void {
  writeAnswerToSocket(socket, status.code, 'application/json', Buffer.from(JSON.stringify(status)), headers);
}

/**
 * One complete answer on a socket that then closes: the caller reads exactly this answer, and nothing it
 * sent behind its request is ever answered.
 */
function writeAnswerToSocket(
  socket: Duplex,
  code: number,
  contentType: string | undefined,
  body: Buffer,
  headers: Record<string, string> = {},
): void {
  const lines = [
    `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? 'Unknown'}`,
    ...(contentType ? [`content-type: ${contentType}`] : []),
    `content-length: ${body.length}`,
    'connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
  // A lingering close, as Go's server closes: what the caller sent behind its request is read and dropped
  // until it closes its side (closing with unread bytes would reset the connection and could lose the
  // answer on its way), 2 s at most.
  socket.on('error', () => undefined);
  const close = () => socket.destroy();
  const timer = setTimeout(close, LINGER_MS);
  timer.unref?.();
  socket.on('data', () => undefined);
  socket.once('end', close);
  socket.once('close', () => clearTimeout(timer));
  socket.resume();
}

const LINGER_MS = 2_000;
