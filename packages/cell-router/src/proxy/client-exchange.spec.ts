import { createServer as createHttp1Server } from 'node:http';
import { connect, createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';

import { keepAliveUploads } from '../testing/keep-alive-uploads.ts';
import { acceptsOnlyProtobuf, releaseUnreadBody, writeHead } from './client-exchange.ts';
import { type ClientRequest, type ClientResponse } from '../server/client-request.ts';

/**
 * Starts sending the body on, as the router does to an apiserver, which reads its first bytes and refuses
 * (403) before the rest: the router stops reading the caller's body half-way.
 */
const refuseEarly = (request: ClientRequest, response: ClientResponse) => {
  const upstream = new PassThrough();
  request.pipe(upstream);
  upstream.once('data', () => {
    upstream.destroy();
    writeHead(response, 403, { 'content-type': 'application/json' });
    response.end('{"kind":"Status","code":403}');
    releaseUnreadBody(request);
  });
};

describe('releaseUnreadBody', () => {
  describe('over HTTP/2', () => {
    let server: Http2Server;
    let url = '';
    /** How each stream the server served ended: its RST_STREAM code. */
    const serverStreamsClosed: Promise<number | undefined>[] = [];

    beforeAll(async () => {
      server = createServer((request, response) => {
        serverStreamsClosed.push(
          new Promise((resolve) => request.stream.once('close', () => resolve(request.stream.rstCode))),
        );
        refuseEarly(request, response);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('reads and drops the rest of early-answered uploads, which end whole with their answers', async () => {
      // Uploads queue in the client's session: its memory limit is raised so that it does not refuse the
      // answers itself (ENHANCE_YOUR_CALM).
      const session = connect(url, { maxSessionMemory: 1000 });
      // 16 uploads of 4 MiB each on one session: left open, they would hold the streams for good.
      const answers = await Promise.all(
        Array.from(
          { length: 16 },
          () =>
            new Promise<{ code: number; body: string }>((resolve) => {
              const stream = session.request({ ':method': 'PUT', ':path': '/upload' });
              let code = 0;
              let body = '';
              stream.on('response', (head) => (code = Number(head[':status'])));
              stream.on('data', (chunk: Buffer) => (body += chunk.toString()));
              stream.on('error', () => undefined);
              // The whole answer: Node's client itself keeps a stream reset with NO_ERROR open while it
              // still has body to write, so the answer's end is what the caller has.
              stream.on('end', () => resolve({ code, body }));
              stream.end(Buffer.alloc(4 * 1024 * 1024, 0x61));
            }),
        ),
      );
      for (const answer of answers)
        expect(answer).toEqual({ code: 403, body: '{"kind":"Status","code":403}' });
      expect(await Promise.all(serverStreamsClosed)).toEqual(answers.map(() => 0));
      session.destroy();
    });
  });

  describe('over HTTP/2, a caller that does not stop', () => {
    it('is reset with NO_ERROR once more than the limit has been dropped', async () => {
      let streamClosed: (code: number | undefined) => void = () => undefined;
      const closed = new Promise<number | undefined>((resolve) => (streamClosed = resolve));
      const server = createServer((request, response) => {
        request.stream.once('close', () => streamClosed(request.stream.rstCode));
        writeHead(response, 413, { 'content-type': 'application/json' });
        response.end('{"kind":"Status","code":413}');
        releaseUnreadBody(request);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      try {
        const stream = session.request({ ':method': 'PUT', ':path': '/upload' });
        stream.on('error', () => undefined);
        const chunk = Buffer.alloc(1024 * 1024, 0x61);
        // Keeps sending; Node's client keeps its side open while it has body left, so it is not awaited.
        void (async () => {
          for (let sent = 0; sent < 64 && !stream.destroyed && !stream.closed; sent++)
            if (!stream.write(chunk))
              await new Promise((resolve) => stream.once('drain', resolve).once('close', resolve));
        })();
        expect(await closed).toBe(0);
      } finally {
        session.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });

  describe('over HTTP/1.1', () => {
    it('drops the rest of the body, so the connection carries the next request', async () => {
      const uploads = await keepAliveUploads(createHttp1Server(refuseEarly));
      try {
        expect(await uploads.upload(1024 * 1024)).toBe('403 {"kind":"Status","code":403}');
        expect(await uploads.upload(1024 * 1024)).toBe('403 {"kind":"Status","code":403}');
        expect(uploads.connections()).toBe(1);
      } finally {
        await uploads.close();
      }
    });
  });
});

describe('acceptsOnlyProtobuf', () => {
  it.each([
    ['application/vnd.kubernetes.protobuf', true],
    ['application/vnd.kubernetes.protobuf;stream=watch', true],
    ['application/vnd.kubernetes.protobuf, application/json', false],
    ['application/json', false],
    ['*/*', false],
    ['application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io', false],
    ['', false],
    [undefined, false],
  ])('%s: %s', (accept, only) => {
    expect(acceptsOnlyProtobuf(accept)).toBe(only);
  });
});
