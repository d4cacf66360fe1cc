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
/** The body of an answer that refuses an upgrade: a Status, or one of Go's plain-text lines. */
const MAX_ERROR_TEXT_BYTES = 64 * 1024;

/** How long an apiserver may take to answer an upgrade (kube-apiserver gives the kubelet as long). */
const ANSWER_HEAD_WITHIN_MS = 60_000;

/**
 * Reads an HTTP/1.1 answer's head off `upstream` and leaves the connection paused after it, so the caller
 * decides what to relay. Fails if the connection ends or closes first (destroyed because the caller left,
 * say), sends something that is not HTTP/1.x, or sends no head within a minute.
 */
export function readAnswerHead(upstream: Duplex, withinMs = ANSWER_HEAD_WITHIN_MS): Promise<AnswerHead> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const timer = setTimeout(
      () => fail(`the apiserver sent no answer within ${withinMs / 1000} s`),
      withinMs,
    );
    const stop = () => {
      clearTimeout(timer);
      upstream.off('data', onData);
      upstream.off('end', onEnd);
      upstream.off('close', onEnd);
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
    upstream.once('close', onEnd);
    upstream.once('error', onError);
  });
}

/** How long the rest of an answer may take: a connection kept open without a length is not waited on. */
const BODY_WITHIN_MS = 10_000;

/**
 * The body after `head`, whole: as long as its content-length says, its chunks up to the last one (decoded),
 * or up to the end of the connection (10 s at most); at most 64 KiB (an apiserver's answer to an upgrade it
 * refused is a Status, not a payload), cut there.
 */
export function readAnswerBody(upstream: Duplex, head: AnswerHead): Promise<Buffer> {
  const declared = Number(head.headers['content-length'] ?? Number.NaN);
  const chunked = /chunked/i.test(head.headers['transfer-encoding'] ?? '');
  const wanted = Math.min(
    Number.isNaN(declared) || chunked ? MAX_ERROR_TEXT_BYTES : declared,
    MAX_ERROR_TEXT_BYTES,
  );
  return new Promise((resolve) => {
    let received = head.rest;
    const body = () => (chunked ? dechunk(received).body : received).subarray(0, wanted);
    const complete = () =>
      chunked
        ? dechunk(received).complete || received.length >= MAX_ERROR_TEXT_BYTES * 2
        : received.length >= wanted;
    const timer = setTimeout(() => done(), BODY_WITHIN_MS);
    const done = () => {
      clearTimeout(timer);
      upstream.off('data', onData);
      upstream.off('end', done);
      upstream.off('close', done);
      upstream.off('error', done);
      resolve(body());
    };
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (complete()) done();
    };
    if (complete()) {
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

/** A chunked body decoded as far as it has come, and whether its last (empty) chunk came. */
export function dechunk(bytes: Buffer): { body: Buffer; complete: boolean } {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1').split(';')[0]!.trim(), 16);
    if (Number.isNaN(size)) break;
    if (size === 0) return { body: Buffer.concat(parts), complete: true };
    const start = lineEnd + 2;
    parts.push(bytes.subarray(start, Math.min(start + size, bytes.length)));
    if (start + size + 2 > bytes.length) break;
    at = start + size + 2;
  }
  return { body: Buffer.concat(parts), complete: false };
}
