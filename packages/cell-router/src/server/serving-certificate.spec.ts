import { FakeClock, memoryLogger } from '@cellfed/controller-kit/testing';

import { followTlsSecret, readTlsSecret, type ServingCertificate } from './serving-certificate.ts';

const secret = (cert: string, key: string) => ({
  type: 'kubernetes.io/tls',
  data: { 'tls.crt': Buffer.from(cert).toString('base64'), 'tls.key': Buffer.from(key).toString('base64') },
});

describe('serving certificate from a Secret', () => {
  it('reads tls.crt and tls.key, and says which Secret is unusable', async () => {
    const paths: string[] = [];
    const client = {
      request: async <T>(_method: string, path: string) => {
        paths.push(path);
        return (path.endsWith('/good') ? secret('CERT', 'KEY') : { data: { 'tls.crt': 'Q0VSVA==' } }) as T;
      },
    };
    expect(await readTlsSecret(client, 'cellfed-system/good')).toEqual({ cert: 'CERT', key: 'KEY' });
    expect(paths[0]).toBe('/api/v1/namespaces/cellfed-system/secrets/good');
    await expect(readTlsSecret(client, 'cellfed-system/half')).rejects.toThrow(
      'TLS Secret cellfed-system/half has no tls.key',
    );
  });

  it('applies a renewed certificate, and keeps the current one when a read fails', async () => {
    const clock = new FakeClock();
    let answer: unknown = secret('A', 'K');
    const client = {
      request: async <T>() => {
        if (answer instanceof Error) throw answer;
        return answer as T;
      },
    };
    const applied: ServingCertificate[] = [];
    const stop = new AbortController();
    const following = followTlsSecret({
      client,
      ref: 'ns/tls',
      current: { cert: 'A', key: 'K' },
      apply: (certificate) => applied.push(certificate),
      signal: stop.signal,
      logger: memoryLogger().logger,
      clock,
      intervalMs: 1000,
    });
    await clock.advance(1000);
    expect(applied).toEqual([]);
    answer = new Error('apiserver unavailable');
    await clock.advance(1000);
    answer = secret('B', 'K2');
    await clock.advance(1000);
    expect(applied).toEqual([{ cert: 'B', key: 'K2' }]);
    stop.abort();
    await following;
  });
});
