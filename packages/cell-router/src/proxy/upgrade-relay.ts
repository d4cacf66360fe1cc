import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

import type { KubeClient } from '@cellfed/controller-kit';

import { isErrorWithoutStatus, statusFromText, type KubeStatus } from '../status/kube-status.ts';
import { readAnswerHead, readAnswerText, type AnswerHead } from './answer-head.ts';
import { upstreamHeaders } from './headers.ts';

/**
 * exec, attach and port-forward: the caller's upgrade request goes to the apiserver on a connection of its
 * own, as the caller. Its answer's head is read first: a 101 (or any answer with a Status body) is relayed as
 * it came and then bytes both ways, until either side closes; a plain-text error from Go's HTTP server (a
 * `400 Bad Request` for a path it cannot parse) becomes a Status. Resolves with the apiserver's code.
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
  const upstream = await client.tunnel(request.method ?? 'GET', request.url ?? '/', headers);
  // Either side may fail at any time; its 'close' follows and ends the relay.
  const ignore = () => undefined;
  socket.on('error', ignore);
  upstream.on('error', ignore);
  // The caller gone before the answer came: the apiserver's connection is not needed any more.
  const callerGone = () => upstream.destroy();
  socket.once('close', callerGone);
  if (head.length > 0) upstream.write(head);
  socket.pipe(upstream);
  let answer: AnswerHead;
  try {
    answer = await readAnswerHead(upstream);
  } catch (error) {
    upstream.destroy();
    throw error;
  } finally {
    socket.off('close', callerGone);
  }
  if (isErrorWithoutStatus(answer.code, answer.headers['content-type'])) {
    const text = await readAnswerText(upstream, answer);
    socket.unpipe(upstream);
    upstream.destroy();
    writeStatusToSocket(socket, statusFromText(answer.code, text));
    return answer.code;
  }
  socket.write(Buffer.concat([answer.bytes, answer.rest]));
  upstream.pipe(socket);
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
  const text = JSON.stringify(status);
  const lines = [
    `HTTP/1.1 ${status.code} ${STATUS_CODES[status.code] ?? status.reason}`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(text)}`,
    'connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${text}`);
}
