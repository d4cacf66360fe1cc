import { Agent, request as http1Request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Uploads to `server` over one kept-alive HTTP/1.1 connection, one at a time: whether a connection goes on
 * carrying requests after one was answered early is what the router's early answers must keep.
 */
export async function keepAliveUploads(server: Server) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<unknown>();
  return {
    /** The answer to an upload of `bytes`, as `<code> <body>`. */
    upload: (bytes: number, method = 'PUT') =>
      new Promise<string>((resolve, reject) => {
        const request = http1Request({ port, host: '127.0.0.1', method, path: '/upload', agent });
        request.on('socket', (socket) => sockets.add(socket));
        request.on('response', (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve(`${response.statusCode} ${text}`));
        });
        request.on('error', reject);
        request.end(Buffer.alloc(bytes, 0x61));
      }),
    /** How many connections the uploads took. */
    connections: () => sockets.size,
    close: async () => {
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
