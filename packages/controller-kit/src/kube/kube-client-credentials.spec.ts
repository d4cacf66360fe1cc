import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { jest } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';

import { CREDENTIALS_TTL_MS, KubeClient } from './kube-client.ts';

/** An HTTP server answering every request with `{}`, keeping each request's headers. */
async function recordingServer(): Promise<{ server: Server; seen: IncomingHttpHeaders[]; url: string }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    response.setHeader('content-type', 'application/json');
    response.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function configFor(server: string, token: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return config;
}

describe('KubeClient credentials', () => {
  it('resolves them once per ttl, shared by concurrent requests, and again after it (a refreshed token)', async () => {
    const { server, seen, url } = await recordingServer();
    const config = configFor(url, 'unused');
    // The token the kubeconfig's user gives now (a ServiceAccount token file that kubelet rotates).
    let token = 'first-token';
    const resolve = jest.spyOn(config, 'applyToHTTPSOptions').mockImplementation(async (options) => {
      options.headers = { ...options.headers, Authorization: `Bearer ${token}` };
    });
    let now = 1_000_000;
    const client = new KubeClient(config, { clock: { now: () => now } });
    try {
      await Promise.all([1, 2, 3].map(() => client.request('GET', '/api')));
      await client.request('GET', '/api');
      expect(resolve).toHaveBeenCalledTimes(1);

      // The token changes: used once the ttl has passed, not before.
      token = 'second-token';
      now += CREDENTIALS_TTL_MS - 1;
      await client.request('GET', '/api');
      now += 1;
      await client.request('GET', '/api');
      expect(resolve).toHaveBeenCalledTimes(2);
      expect(seen.map((headers) => headers.authorization)).toEqual([
        ...Array(5).fill('Bearer first-token'),
        'Bearer second-token',
      ]);
    } finally {
      await client.close();
      server.close();
    }
  });

  it('keeps no failed resolution: the next request asks again', async () => {
    const { server, seen, url } = await recordingServer();
    const config = configFor(url, 'token');
    const resolve = jest
      .spyOn(config, 'applyToHTTPSOptions')
      .mockRejectedValueOnce(new Error('exec plugin failed'));
    const client = new KubeClient(config, { clock: { now: () => 0 } });
    try {
      await expect(client.request('GET', '/api')).rejects.toThrow('exec plugin failed');
      await client.request('GET', '/api');
      expect(resolve).toHaveBeenCalledTimes(2);
      expect(seen).toHaveLength(1);
    } finally {
      await client.close();
      server.close();
    }
  });
});
