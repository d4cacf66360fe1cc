import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

import type { KubeClient } from '@cellfed/controller-kit';

import type { KubeStatus } from '../status/kube-status.ts';
import { upstreamHeaders } from './headers.ts';

/**
 * exec, attach and port-forward: the caller's upgrade request goes to the apiserver on a connection of its
 * own, as the caller; whatever the apiserver answers (101 and then SPDY or WebSocket frames, or an error
 * Status) is relayed byte for byte, both ways, until either side closes.
 */
export async function relayUpgrade(
  client: KubeClient,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  impersonation: Record<string, string | string[]>,
): Promise<void> {
  const headers = upstreamHeaders(request.headers, impersonation);
  headers.connection = 'Upgrade';
  headers.upgrade = request.headers.upgrade ?? '';
  const upstream = await client.tunnel(request.method ?? 'GET', request.url ?? '/', headers);
  if (head.length > 0) upstream.write(head);
  socket.pipe(upstream);
  upstream.pipe(socket);
  await new Promise<void>((resolve) => {
    const end = () => {
      socket.destroy();
      upstream.destroy();
      resolve();
    };
    for (const side of [socket, upstream]) {
      side.once('close', end);
      side.once('error', end);
    }
  });
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
