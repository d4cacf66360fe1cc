import { createServer } from 'node:http';
import { Readable } from 'node:stream';

import { refusal } from '../routing/destination.ts';
import { forbidden } from '../status/kube-status.ts';
import { keepAliveUploads } from '../testing/keep-alive-uploads.ts';
import { callerKeys } from '../auth/caller-keys.ts';
import { BodyBudget } from './body-budget.ts';
import type { ClientRequest } from './client-request.ts';
import { RequestBody } from './request-body.ts';

const KIB = 1024;
const allowed = () => Promise.resolve(undefined);
const denied = () => Promise.resolve(refusal(forbidden('configmaps is forbidden'), 'forbidden'));

/** A request whose body arrives in `chunks` of the sizes given, with a Content-Length unless `chunked`. */
function requestOf(chunks: number[], chunked = false): ClientRequest & { consumed: () => number } {
  let consumed = 0;
  const stream = Readable.from(
    chunks.map((size) => Buffer.alloc(size, 'x')),
    { objectMode: false },
  ).on('data', (chunk: Buffer) => (consumed += chunk.length));
  const total = chunks.reduce((sum, size) => sum + size, 0);
  return Object.assign(stream, {
    headers: chunked ? {} : { 'content-length': String(total) },
    consumed: () => consumed,
  }) as unknown as ClientRequest & { consumed: () => number };
}

describe('RequestBody', () => {
  it('refuses a body over the limit without resetting the connection, which carries the next request', async () => {
    const uploads = await keepAliveUploads(
      createServer(async (request, response) => {
        const body = await new RequestBody(request, { unauthorizedBytes: Infinity }, [], allowed).read(
          1024 * KIB,
        );
        if (!Buffer.isBuffer(body)) response.writeHead(body.status.code).end();
        else response.writeHead(200).end(`${body.length}`);
      }),
    );
    try {
      expect(await uploads.upload(4 * 1024 * KIB, 'POST')).toBe('413 ');
      expect(await uploads.upload(10, 'POST')).toBe('200 10');
      expect(uploads.connections()).toBe(1);
    } finally {
      await uploads.close();
    }
  });

  it('reads a small body without asking whether the caller may make the request', async () => {
    let asked = 0;
    const authorize = () => {
      asked++;
      return denied();
    };
    const body = await new RequestBody(
      requestOf([2 * KIB]),
      { unauthorizedBytes: 64 * KIB },
      [],
      authorize,
    ).read(3 * 1024 * KIB);
    expect(Buffer.isBuffer(body) && body.length).toBe(2 * KIB);
    expect(asked).toBe(0);
  });

  it('holds nothing of a larger body for a caller not allowed the request: its 403 first, by Content-Length', async () => {
    const budget = new BodyBudget({ totalBytes: 100 * 1024 * KIB, perCallerBytes: 100 * 1024 * KIB });
    const request = requestOf([1024 * KIB, 1024 * KIB]);
    const answer = await new RequestBody(
      request,
      { budget, unauthorizedBytes: 64 * KIB },
      ['user:m'],
      denied,
    ).read(3 * 1024 * KIB);
    expect(answer).toMatchObject({ status: { code: 403 } });
    expect(budget.held).toBe(0);
  });

  it('asks as a chunked body passes the unauthorized bytes, and stops reading for a caller not allowed', async () => {
    const budget = new BodyBudget({ totalBytes: 100 * 1024 * KIB, perCallerBytes: 100 * 1024 * KIB });
    const request = requestOf([32 * KIB, 32 * KIB, 32 * KIB, 1024 * KIB], true);
    let asked = 0;
    const authorize = () => {
      asked++;
      return denied();
    };
    const body = new RequestBody(request, { budget, unauthorizedBytes: 64 * KIB }, ['user:m'], authorize);
    expect(await body.read(3 * 1024 * KIB)).toMatchObject({ status: { code: 403 } });
    expect(asked).toBe(1);
    expect(budget.held).toBe(0);
    // An allowed caller's body is read whole, after one question.
    const allowedBody = await new RequestBody(
      requestOf([32 * KIB, 32 * KIB, 32 * KIB], true),
      { budget, unauthorizedBytes: 64 * KIB },
      ['user:a'],
      allowed,
    ).read(3 * 1024 * KIB);
    expect(Buffer.isBuffer(allowedBody) && allowedBody.length).toBe(96 * KIB);
  });

  it('answers 429 past the caller’s share or the total, holds what it read until released, then gives it back', async () => {
    const budget = new BodyBudget({ totalBytes: 5 * KIB, perCallerBytes: 3 * KIB });
    const holding = { budget, unauthorizedBytes: Infinity };
    const first = new RequestBody(requestOf([2 * KIB]), holding, ['user:a'], allowed);
    expect(Buffer.isBuffer(await first.read(KIB * KIB))).toBe(true);
    expect(budget.held).toBe(2 * KIB);
    // The same caller past its share; another caller within its own and the total.
    const again = await new RequestBody(requestOf([2 * KIB]), holding, ['user:a'], allowed).read(KIB * KIB);
    expect(again).toMatchObject({
      status: { code: 429, reason: 'TooManyRequests' },
      headers: { 'retry-after': '1' },
    });
    const other = new RequestBody(requestOf([3 * KIB]), holding, ['user:b'], allowed);
    expect(Buffer.isBuffer(await other.read(KIB * KIB))).toBe(true);
    // The total spent: a third caller waits.
    expect(
      await new RequestBody(requestOf([KIB]), holding, ['user:c'], allowed).read(KIB * KIB),
    ).toMatchObject({ status: { code: 429 } });
    first.release();
    other.release();
    expect(budget.held).toBe(0);
    expect(budget.callers).toBe(0);
  });
});

describe('callerKeys', () => {
  it('counts a ServiceAccount under its namespace too, so minted accounts share one share', () => {
    expect(callerKeys({ username: 'system:serviceaccount:team:a1' })).toEqual([
      'user:system:serviceaccount:team:a1',
      'serviceaccounts:team',
    ]);
    expect(callerKeys({ username: 'alice' })).toEqual(['user:alice']);
  });

  it('holds accounts of one namespace to the namespace’s share', () => {
    const budget = new BodyBudget({ totalBytes: 100, perCallerBytes: 10 });
    expect(budget.take(callerKeys({ username: 'system:serviceaccount:team:a1' }), 8)).toBe(true);
    expect(budget.take(callerKeys({ username: 'system:serviceaccount:team:a2' }), 8)).toBe(false);
    expect(budget.take(callerKeys({ username: 'system:serviceaccount:other:a1' }), 8)).toBe(true);
  });
});
