import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';

import { answerClientError } from './client-errors.ts';

describe('answerClientError', () => {
  let server: Server;
  let port = 0;

  beforeAll(async () => {
    server = createServer((_request, response) => response.end('ok'));
    server.on('clientError', answerClientError);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Sends raw bytes; resolves with the status line and the body of the answer. */
  const raw = (bytes: string) =>
    new Promise<{ statusLine: string; body: string }>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      socket.on('error', reject);
      socket.on('close', () => {
        const [head = '', body = ''] = answer.split('\r\n\r\n');
        resolve({ statusLine: head.split('\r\n')[0]!, body });
      });
      socket.end(bytes);
    });

  it.each([
    ['a request line that is not HTTP', 'GARBAGE\r\n\r\n', 400, 'BadRequest'],
    ['a header without a colon', 'GET / HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n', 400, 'BadRequest'],
    [
      'both Content-Length and chunked',
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc',
      400,
      'BadRequest',
    ],
  ])('answers %s with a Status', async (_what, bytes, code, reason) => {
    const { statusLine, body } = await raw(bytes);
    expect(statusLine).toBe(`HTTP/1.1 ${code} Bad Request`);
    expect(JSON.parse(body)).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code,
      reason,
    });
  });

  it('answers a method Node does not know, and keeps reading the body the caller is still sending', async () => {
    // Closing the connection with the body unread would reset it, and the caller could lose the answer.
    const body = 'a'.repeat(4 * 1024 * 1024);
    const { statusLine, body: answer } = await raw(
      `FOO /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(answer)).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
  });

  it('answers headers over the limit with 431 and a Status', async () => {
    const { statusLine, body } = await raw(
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(JSON.parse(body)).toMatchObject({
      kind: 'Status',
      code: 431,
      reason: 'RequestHeaderFieldsTooLarge',
    });
  });
});
