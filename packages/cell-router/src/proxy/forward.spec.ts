import { Agent, createServer, request as http1Request } from 'node:http';
import type { AddressInfo } from 'node:net';

import { readBody } from './forward.ts';

describe('readBody', () => {
  it('refuses a body over the limit without resetting the connection, which carries the next request', async () => {
    const server = createServer(async (request, response) => {
      const body = await readBody(request, 1024 * 1024);
      response.writeHead(body === 'too-large' ? 413 : 200).end(body === 'too-large' ? '' : `${body.length}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    const send = (size: number) =>
      new Promise<string>((resolve, reject) => {
        const request = http1Request({
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/',
          agent: keepAlive,
        });
        request.on('socket', (socket) => sockets.add(socket));
        request.on('response', (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve(`${response.statusCode} ${text}`));
        });
        request.on('error', reject);
        request.end(Buffer.alloc(size, 0x61));
      });
    try {
      expect(await send(4 * 1024 * 1024)).toBe('413 ');
      expect(await send(10)).toBe('200 10');
      expect(sockets.size).toBe(1);
    } finally {
      keepAlive.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
