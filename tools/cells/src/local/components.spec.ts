import { join } from 'node:path';

import {
  etcdArgs,
  kubeApiserverArgs,
  kubeControllerManagerArgs,
  type ApiserverLayout,
} from './components.ts';
import type { ApiserverPki } from './pki.ts';

const pkiDir = '/env/pki/cell-1';
const pki = Object.fromEntries(
  [
    'caCert',
    'caKey',
    'servingCert',
    'servingKey',
    'adminCert',
    'adminKey',
    'frontProxyCaCert',
    'frontProxyCaKey',
    'frontProxyClientCert',
    'frontProxyClientKey',
    'controllerManagerCert',
    'controllerManagerKey',
    'serviceAccountKey',
    'serviceAccountPublicKey',
  ].map((key) => [key, join(pkiDir, key)]),
) as unknown as ApiserverPki;
const layout: ApiserverLayout = {
  id: 'cell-1',
  port: 6443,
  etcdClientPort: 2379,
  etcdPeerPort: 2380,
  etcdDataDir: '/dev/shm/x/cell-1',
  serviceCidr: '10.0.0.0/24',
  pki,
  controllerManagerKubeconfig: '/env/pki/cell-1/kcm.kubeconfig',
};

describe('component command lines', () => {
  it('etcd: one member on its own loopback ports, data on tmpfs, no fsync', () => {
    expect(etcdArgs(layout)).toEqual(
      expect.arrayContaining([
        '--data-dir=/dev/shm/x/cell-1',
        '--listen-client-urls=http://127.0.0.1:2379',
        '--initial-cluster=cell-1=http://127.0.0.1:2380',
        '--unsafe-no-fsync',
      ]),
    );
  });

  it('kube-apiserver: loopback flags, its own CA and service-account keys, RBAC', () => {
    const args = kubeApiserverArgs(layout);
    expect(args).toEqual(
      expect.arrayContaining([
        '--etcd-servers=http://127.0.0.1:2379',
        '--secure-port=6443',
        '--advertise-address=127.0.0.1',
        '--endpoint-reconciler-type=none',
        `--client-ca-file=${pki.caCert}`,
        `--tls-cert-file=${pki.servingCert}`,
        `--service-account-signing-key-file=${pki.serviceAccountKey}`,
        `--service-account-key-file=${pki.serviceAccountPublicKey}`,
        '--authorization-mode=RBAC',
        '--requestheader-client-ca-file=/env/pki/cell-1/frontProxyCaCert',
        '--requestheader-allowed-names=front-proxy-client',
        '--requestheader-username-headers=X-Remote-User',
      ]),
    );
    expect(args.some((arg) => arg.startsWith('--insecure'))).toBe(false);
  });

  it('kube-controller-manager: its own kubeconfig, no serving port, no leader election', () => {
    expect(kubeControllerManagerArgs(layout)).toEqual(
      expect.arrayContaining([
        '--kubeconfig=/env/pki/cell-1/kcm.kubeconfig',
        '--secure-port=0',
        '--leader-elect=false',
        `--service-account-private-key-file=${pki.serviceAccountKey}`,
      ]),
    );
    expect(kubeControllerManagerArgs(layout).some((arg) => arg.startsWith('--controllers'))).toBe(false);
  });

  it('leaves the router control plane’s quota controller off', () => {
    expect(kubeControllerManagerArgs({ ...layout, disabledControllers: ['resourcequota'] })).toContain(
      '--controllers=*,-resourcequota',
    );
  });
});
