import type { Duplex } from 'node:stream';

/** An apiserver's answer on a raw connection (an upgrade), read up to the end of its headers. */
export interface AnswerHead {
  readonly code: number;
  /** Lowercased names; a repeated header keeps its last value (only content-type and -length are read). */
  readonly headers: Readonly<Record<string, string>>;
  /** The status line and headers as they came, with the blank line. */
  readonly bytes: Buffer;
  /** What came after the headers in the same reads: the start of the body, or of the upgraded protocol. */
  readonly rest: Buffer;
}

/** Go's net/http accepts response heads up to about this size; anything larger is not an apiserver. */
const MAX_HEAD_BYTES = 64 * 1024;
/** An error body the router turns into a Status: Go's plain-text errors are one line. */
const MAX_ERROR_TEXT_BYTES = 64 * 1024;

/**
 * Reads an HTTP/1.1 answer's head off `upstream` and leaves the connection paused after it, so the caller
 * decides what to relay. Fails if the connection ends first or sends something that is not HTTP/1.x.
 */
export function readAnswerHead(upstream: Duplex): Promise<AnswerHead> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const stop = () => {
      upstream.off('data', onData);
      upstream.off('end', onEnd);
      upstream.off('error', onError);
      upstream.pause();
    };
    const fail = (message: string) => {
      stop();
      reject(new Error(message));
    };
    const onError = (error: Error) => fail(`the apiserver's connection failed: ${error.message}`);
    const onEnd = () => fail('the apiserver closed the connection without an answer');
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buffered.length > MAX_HEAD_BYTES)
          fail(`the apiserver's answer head is over ${MAX_HEAD_BYTES} bytes`);
        return;
      }
      stop();
      const [statusLine = '', ...lines] = buffered.subarray(0, end).toString('latin1').split('\r\n');
      const code = Number(/^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine)?.[1] ?? Number.NaN);
      if (Number.isNaN(code)) {
        reject(
          new Error(`the apiserver answered with ${JSON.stringify(statusLine.slice(0, 80))}, not HTTP/1.1`),
        );
        return;
      }
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ code, headers, bytes: buffered.subarray(0, end + 4), rest: buffered.subarray(end + 4) });
    };
    upstream.on('data', onData);
    upstream.once('end', onEnd);
    upstream.once('error', onError);
  });
}

/** How long the rest of an error body may take: a connection kept open without a length is not waited on. */
const ERROR_TEXT_WITHIN_MS = 10_000;

/**
 * The body after `head`: as long as its content-length says, or up to the end of the connection (10 s at
 * most), and at most 64 KiB (an error message, not a payload).
 */
export function readAnswerText(upstream: Duplex, head: AnswerHead): Promise<string> {
  const declared = Number(head.headers['content-length'] ?? Number.NaN);
  const wanted = Math.min(Number.isNaN(declared) ? MAX_ERROR_TEXT_BYTES : declared, MAX_ERROR_TEXT_BYTES);
  return new Promise((resolve) => {
    let body = head.rest;
    const timer = setTimeout(() => done(), ERROR_TEXT_WITHIN_MS);
    const done = () => {
      clearTimeout(timer);
      upstream.off('data', onData);
      upstream.off('end', done);
      upstream.off('close', done);
      upstream.off('error', done);
      resolve(body.subarray(0, wanted).toString('utf8'));
    };
    const onData = (chunk: Buffer) => {
      body = Buffer.concat([body, chunk]);
      if (body.length >= wanted) done();
    };
    if (body.length >= wanted) {
      done();
      return;
    }
    upstream.on('data', onData);
    upstream.once('end', done);
    upstream.once('close', done);
    upstream.once('error', done);
    upstream.resume();
  });
}
