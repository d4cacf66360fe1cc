import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { E2eErrorCode } from '../errors.ts';
import { createApiserverPki } from './pki.ts';

describe('createApiserverPki', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cellfed-pki-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const pki = createApiserverPki(join(dir, 'cell-1'), { name: 'cell-1', serviceIp: '10.0.0.1' });
  const cert = (file: string) => new X509Certificate(readFileSync(file));
  const ca = cert(pki.caCert);

  it('makes a CA that signed every certificate', () => {
    expect(ca.ca).toBe(true);
    expect(ca.subject).toBe('CN=cell-1-ca');
    for (const file of [
      pki.servingCert,
      pki.adminCert,
      ...Object.values(pki.componentCerts).map((pair) => pair.cert),
      pki.controllerManagerCert,
    ]) {
      const leaf = cert(file);
      expect(leaf.ca).toBe(false);
      expect(leaf.checkIssued(ca)).toBe(true);
      expect(leaf.verify(ca.publicKey)).toBe(true);
    }
  });

  it('makes a second CA, the front proxy’s, whose one client is front-proxy-client (as kubeadm does)', () => {
    const frontProxyCa = cert(pki.frontProxyCaCert);
    expect(frontProxyCa.ca).toBe(true);
    expect(frontProxyCa.subject).toBe('CN=cell-1-front-proxy-ca');
    const client = cert(pki.frontProxyClientCert);
    expect(client.subject).toBe('CN=front-proxy-client');
    expect(client.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']); // clientAuth
    expect(client.verify(frontProxyCa.publicKey)).toBe(true);
    // Not the cell's CA: a front-proxy certificate is no client certificate of the cell, nor the reverse.
    expect(client.verify(ca.publicKey)).toBe(false);
    expect(cert(pki.adminCert).verify(frontProxyCa.publicKey)).toBe(false);
  });

  it('serves loopback and the in-cluster names', () => {
    const serving = cert(pki.servingCert);
    expect(serving.subjectAltName?.split(', ')).toEqual(
      expect.arrayContaining([
        'IP Address:127.0.0.1',
        'IP Address:10.0.0.1',
        'DNS:kubernetes.default.svc',
        'DNS:localhost',
      ]),
    );
    expect(serving.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // serverAuth
    expect(serving.checkPrivateKey(createPrivateKey(readFileSync(pki.servingKey)))).toBe(true);
  });

  it('issues the admin client certificate as CN admin in system:masters', () => {
    const admin = cert(pki.adminCert);
    expect(admin.subject.split('\n').sort()).toEqual(['CN=admin', 'O=system:masters']);
    expect(admin.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']); // clientAuth
    expect(cert(pki.controllerManagerCert).subject).toBe('CN=system:kube-controller-manager');
    // cellfed's own components are someone else than the admin, and each is someone else than the others:
    // the cell's write fence tells them apart, and each component's bindings give it only its own rights.
    // Only in system:monitoring (traces continued, /metrics): the cellfed-cell chart's bindings give the rest.
    expect(
      Object.entries(pki.componentCerts).map(([component, pair]) => [
        component,
        cert(pair.cert).subject.split('\n').sort(),
      ]),
    ).toEqual([
      ['router', ['CN=cellfed-router', 'O=system:monitoring']],
      ['rebalance-controller', ['CN=cellfed-rebalance-controller', 'O=system:monitoring']],
      ['backup-controller', ['CN=cellfed-backup-controller', 'O=system:monitoring']],
    ]);
  });

  it('makes a service-account key pair and keeps private keys private', () => {
    const privateKey = createPrivateKey(readFileSync(pki.serviceAccountKey));
    expect(createPublicKey(privateKey).export({ type: 'spki', format: 'pem' })).toBe(
      readFileSync(pki.serviceAccountPublicKey, 'utf8'),
    );
    for (const file of [
      pki.caKey,
      pki.adminKey,
      ...Object.values(pki.componentCerts).map((pair) => pair.key),
      pki.serviceAccountKey,
      pki.frontProxyCaKey,
      pki.frontProxyClientKey,
    ]) {
      expect(statSync(file).mode & 0o077).toBe(0);
    }
  });

  it('says what to install when openssl is missing', () => {
    expect(() =>
      createApiserverPki(join(dir, 'broken'), {
        name: 'x',
        serviceIp: '10.0.0.1',
        openssl: '/nonexistent/openssl',
      }),
    ).toThrow(
      expect.objectContaining({
        code: E2eErrorCode.Pki,
        message: expect.stringMatching(/install OpenSSL 3/),
      }),
    );
  });
});
