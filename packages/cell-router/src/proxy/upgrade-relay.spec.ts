import type { IncomingMessage } from 'node:http';
import { duplexPair, type Duplex } from 'node:stream';

import type { KubeClient } from '@cellfed/controller-kit';

import { relayUpgrade } from './upgrade-relay.ts';

/**
 * An apiserver on the other end of a tunnel (the real client writes the request head itself): it answers
 * with `answer` at once and keeps what it receives.
 */
function apiserverAnswering(answer: string): { client: KubeClient; received: () => string } {
  let received = '';
  const client = {
    tunnel: async () => {
      const [router, apiserver] = duplexPair();
      apiserver.on('data', (chunk: Buffer) => (received += chunk.toString()));
      apiserver.on('error', () => undefined);
      setImmediate(() => apiserver.write(answer));
      return router;
    },
  } as unknown as KubeClient;
  return { client, received: () => received };
}

const upgradeRequest = {
  method: 'POST',
  url: '/api/v1/namespaces/default/pods/web/exec?command=sh',
  headers: { upgrade: 'SPDY/3.1', connection: 'Upgrade' },
} as unknown as IncomingMessage;

/** What the caller's side of the socket receives until it closes or `until` matches. */
function readAll(socket: Duplex, until?: RegExp): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (until?.test(text)) resolve(text);
    });
    socket.on('close', () => resolve(text));
    socket.on('end', () => resolve(text));
  });
}

describe('relayUpgrade', () => {
  it("turns Go's plain-text error into a Status with the same code", async () => {
    const apiserver = apiserverAnswering(
      'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n' +
        'Content-Length: 15\r\n\r\n400 Bad Request',
    );
    const [caller, router] = duplexPair();
    const answer = readAll(caller);
    const code = await relayUpgrade(apiserver.client, upgradeRequest, router, Buffer.alloc(0), {});
    expect(code).toBe(400);
    const [head = '', body = ''] = (await answer).split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(head).toContain('content-type: application/json');
    expect(JSON.parse(body)).toMatchObject({ kind: 'Status', code: 400, message: '400 Bad Request' });
  });

  it('relays an error that is a Status already, whole, and closes the connection', async () => {
    const status = JSON.stringify({ kind: 'Status', apiVersion: 'v1', code: 404, reason: 'NotFound' });
    const raw = `HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: ${status.length}\r\n\r\n${status}`;
    const apiserver = apiserverAnswering(raw);
    const [caller, router] = duplexPair();
    const answer = readAll(caller);
    await expect(relayUpgrade(apiserver.client, upgradeRequest, router, Buffer.alloc(0), {})).resolves.toBe(
      404,
    );
    caller.end();
    const [head = '', body = ''] = (await answer).split('\r\n\r\n');
    expect(head).toBe(
      `HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: ${status.length}\r\nconnection: close`,
    );
    expect(body).toBe(status);
  });

  it("sends nothing of the caller's behind its request head when the apiserver refuses the upgrade", async () => {
    // A request smuggled behind the upgrade's head (in the same read, and written later): served on the
    // router's connection, it would be answered with the router's identity.
    const smuggled = 'GET /api/v1/namespaces/kube-system/secrets HTTP/1.1\r\nHost: x\r\n\r\n';
    const status = JSON.stringify({ kind: 'Status', apiVersion: 'v1', code: 403, reason: 'Forbidden' });
    const apiserver = apiserverAnswering(
      `HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${status.length}\r\n\r\n${status}`,
    );
    const [caller, router] = duplexPair();
    const answer = readAll(caller);
    caller.write(smuggled);
    const relayed = relayUpgrade(apiserver.client, upgradeRequest, router, Buffer.from(smuggled), {});
    await expect(relayed).resolves.toBe(403);
    caller.write(smuggled);
    expect((await answer).match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(apiserver.received()).toBe('');
    // The router closes the connection itself once the caller is done sending.
    caller.end();
    await new Promise((resolve) => router.once('close', resolve));
  });

  it("holds the caller's early bytes until the 101, then sends them first", async () => {
    let answer101: () => void = () => undefined;
    let received = '';
    const client = {
      tunnel: async () => {
        const [router, apiserver] = duplexPair();
        apiserver.on('data', (chunk: Buffer) => (received += chunk.toString()));
        answer101 = () => apiserver.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: SPDY/3.1\r\n\r\n');
        return router;
      },
    } as unknown as KubeClient;
    const [caller, router] = duplexPair();
    const relayed = relayUpgrade(client, upgradeRequest, router, Buffer.from('early '), {});
    caller.write('later');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received).toBe('');
    const seen = readAll(caller, /101 Switching Protocols\r\nUpgrade: SPDY\/3.1\r\n\r\n$/);
    answer101();
    await seen;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received).toBe('early later');
    router.destroy();
    await expect(relayed).resolves.toBe(101);
  });

  it('relays a 101 and then bytes both ways', async () => {
    const apiserver = apiserverAnswering(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: SPDY/3.1\r\n\r\nstdout',
    );
    const [caller, router] = duplexPair();
    const answer = readAll(caller, /stdout$/);
    const relayed = relayUpgrade(apiserver.client, upgradeRequest, router, Buffer.from('hello'), {});
    expect(await answer).toBe('HTTP/1.1 101 Switching Protocols\r\nUpgrade: SPDY/3.1\r\n\r\nstdout');
    await new Promise((resolve) => setImmediate(resolve));
    expect(apiserver.received()).toBe('hello');
    router.destroy();
    await expect(relayed).resolves.toBe(101);
  });
});
