import { connect, createSecureServer, createServer, type ClientHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';

import { closeIdleSessions, keepHttp1ConnectionsAsKubeApiserver } from './idle-sessions.ts';

describe('closeIdleSessions', () => {
  it('closes a connection with no open stream once idle, and keeps one whose stream (a watch) is open', async () => {
    let watch: (() => void) | undefined;
    const server = createServer((request, response) => {
      if (request.url === '/watch') {
        response.writeHead(200);
        watch = () => response.end();
      } else response.end('ok');
    });
    closeIdleSessions(server, 100);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const closed = (session: ClientHttp2Session) =>
      new Promise<boolean>((resolve) => {
        session.once('close', () => resolve(true));
        setTimeout(() => resolve(false), 400);
      });
    const request = (session: ClientHttp2Session, path: string) => {
      const stream = session.request({ ':path': path });
      stream.resume();
      return stream;
    };
    try {
      const idle = connect(url);
      await new Promise((resolve) => request(idle, '/').once('end', resolve));
      expect(await closed(idle)).toBe(true);

      const watching = connect(url);
      request(watching, '/watch');
      expect(await closed(watching)).toBe(false);
      watch!();
      expect(await closed(watching)).toBe(true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('keepHttp1ConnectionsAsKubeApiserver', () => {
  it('keeps the HTTP/1.1 fallback’s idle connections 90 s, where Node keeps them 5 s', () => {
    const server = createSecureServer({ allowHTTP1: true });
    const timeout = () => (server as unknown as { keepAliveTimeout: number }).keepAliveTimeout;
    expect(timeout()).toBe(5_000);
    keepHttp1ConnectionsAsKubeApiserver(server);
    expect(timeout()).toBe(90_000);
  });
});
