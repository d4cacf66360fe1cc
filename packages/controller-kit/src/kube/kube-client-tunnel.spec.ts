import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

import { KubeClient, headerLine } from './kube-client.ts';

/** A TCP server that keeps every connection's bytes. */
async function rawServer(): Promise<{ server: Server; received: () => Buffer[]; url: string }> {
  const received: Buffer[] = [];
  const sockets: Socket[] = [];
  const server = createServer((socket: Socket) => {
    sockets.push(socket);
    const chunks: Buffer[] = [];
    received.push(Buffer.alloc(0));
    const index = received.length - 1;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received[index] = Buffer.concat(chunks);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // Closing ends the connections too: the test is over.
  const close = server.close.bind(server);
  server.close = (callback) => {
    for (const socket of sockets) socket.destroy();
    return close(callback);
  };
  return {
    server,
    received: () => received,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  };
}

const client = (server: string) =>
  KubeClient.fromKubeconfig(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 'router-token' } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'c',
    }),
  );

describe('KubeClient.tunnel', () => {
  it('refuses a header value that would end its line, before it connects', async () => {
    const { server, received, url } = await rawServer();
    try {
      await expect(
        client(url).tunnel('POST', '/api/v1/namespaces/a/pods/b/exec', {
          'Impersonate-User': 'mallory\r\nImpersonate-Group: system:masters',
        }),
      ).rejects.toThrow('cannot be sent');
      await expect(client(url).tunnel('POST', '/a b', {})).rejects.toThrow('not a valid request line');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(received()).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('writes header values as the bytes they hold', async () => {
    const { server, received, url } = await rawServer();
    const utf8 = Buffer.from('José', 'utf8').toString('latin1');
    const socket = await client(url).tunnel('GET', '/x', { 'Impersonate-User': utf8 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(received()[0]!.includes(Buffer.from('impersonate-user: José', 'utf8'))).toBe(false);
      expect(received()[0]!.includes(Buffer.from('Impersonate-User: José\r\n', 'utf8'))).toBe(true);
      expect(received()[0]!.includes(Buffer.from('authorization: Bearer router-token', 'utf8'))).toBe(true);
    } finally {
      socket.destroy();
      server.close();
    }
  });
});

describe('headerLine', () => {
  it.each([
    ['x', 'a\rb'],
    ['x', 'a\nb'],
    ['x', 'a\0b'],
    ['x', 'Ā'],
    ['a b', 'v'],
    ['a:b', 'v'],
  ])('refuses %j: %j', (name, value) => {
    expect(() => headerLine(name, value)).toThrow('cannot be sent');
  });

  it('keeps tabs and latin1 bytes', () => {
    expect(headerLine('X-A', 'a\tb\u00e9')).toBe('X-A: a\tb\u00e9');
  });
});
