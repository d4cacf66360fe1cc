import { PassThrough } from 'node:stream';

import { dechunk, readAnswerBody, readAnswerHead } from './answer-head.ts';

describe('readAnswerHead', () => {
  it('reads the status and headers, split over several reads, and keeps what came after them', async () => {
    const upstream = new PassThrough();
    const head = readAnswerHead(upstream);
    upstream.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: SPDY/3.1\r\n');
    upstream.write('Connection: Upgrade\r\n\r\nframe-bytes');
    const answer = await head;
    expect(answer.code).toBe(101);
    expect(answer.headers).toEqual({ upgrade: 'SPDY/3.1', connection: 'Upgrade' });
    expect(answer.bytes.toString()).toBe(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: SPDY/3.1\r\nConnection: Upgrade\r\n\r\n',
    );
    expect(answer.rest.toString()).toBe('frame-bytes');
    // Paused after the head: nothing more is read until the caller says so.
    expect(upstream.isPaused()).toBe(true);
  });

  it('fails when the connection ends before an answer', async () => {
    const upstream = new PassThrough();
    const head = readAnswerHead(upstream);
    upstream.end('HTTP/1.1 200');
    await expect(head).rejects.toThrow('closed the connection without an answer');
  });

  it('fails when the connection is destroyed before an answer (the caller left), or none comes in time', async () => {
    const destroyed = new PassThrough();
    const head = readAnswerHead(destroyed);
    destroyed.destroy();
    await expect(head).rejects.toThrow('closed the connection without an answer');
    await expect(readAnswerHead(new PassThrough(), 20)).rejects.toThrow('no answer within 0.02 s');
  });

  it('fails on an answer that is not HTTP/1.x', async () => {
    const upstream = new PassThrough();
    const head = readAnswerHead(upstream);
    upstream.write('SSH-2.0-OpenSSH\r\n\r\n');
    await expect(head).rejects.toThrow('not HTTP/1.1');
  });
});

describe('readAnswerBody', () => {
  it('reads as much as content-length says, over several reads', async () => {
    const upstream = new PassThrough();
    const head = readAnswerHead(upstream);
    upstream.write(
      'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 15\r\n\r\n400 Bad',
    );
    const text = readAnswerBody(upstream, await head).then(String);
    upstream.write(' Request');
    await expect(text).resolves.toBe('400 Bad Request');
  });

  it('reads up to the end of the connection when there is no length', async () => {
    const upstream = new PassThrough();
    const head = readAnswerHead(upstream);
    upstream.write('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\nbad');
    const text = readAnswerBody(upstream, await head).then(String);
    upstream.end(' path');
    await expect(text).resolves.toBe('bad path');
  });

  it('reads a chunked answer up to its last chunk, decoded, on a connection that stays open', async () => {
    const upstream = new PassThrough();
    const head = readAnswerHead(upstream);
    upstream.write('HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n');
    const text = readAnswerBody(upstream, await head).then(String);
    upstream.write('6\r\n world\r\n0\r\n\r\n');
    await expect(text).resolves.toBe('hello world');
  });
});

describe('dechunk', () => {
  it('decodes what has come and says whether the last chunk did', () => {
    expect(dechunk(Buffer.from('3;x=y\r\nabc\r\n2\r\nde'))).toEqual({
      body: Buffer.from('abcde'),
      complete: false,
    });
    expect(dechunk(Buffer.from('1\r\na\r\n0\r\n\r\n')).complete).toBe(true);
  });
});
