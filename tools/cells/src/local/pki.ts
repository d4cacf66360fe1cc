import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { CELL_COMPONENTS, localCellUser, type CellComponent } from '../chart/cell-identities.ts';
import { E2eError, E2eErrorCode } from '../errors.ts';

/** Paths of one apiserver's credentials, all PEM. */
export interface ApiserverPki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  /** CN admin, O system:masters: the admin kubeconfig. */
  adminCert: string;
  adminKey: string;
  /**
   * CN cellfed-<component>, O system:monitoring, one per component that calls the cell (router, rebalance
   * controller, backup controller): what each uses in the cell (its kubeconfig Secret), which only the
   * cellfed-cell chart's bindings for that component give any right to an object. Its one group lets
   * kube-apiserver continue the router's traces (docs/running.md) and read /metrics and health. Not the
   * admin's: the cell's write fence exempts cellfed's components by name, and people reach the cell through
   * the router as themselves, often as admin.
   */
  componentCerts: Readonly<Record<CellComponent, { cert: string; key: string }>>;
  /**
   * The front-proxy CA (`--requestheader-client-ca-file`) and its one client, CN front-proxy-client (the one
   * name `--requestheader-allowed-names` accepts), as kubeadm sets them up: a proxy holding this certificate
   * may say who the caller is in X-Remote-User / X-Remote-Group / X-Remote-Extra-* headers, as
   * kube-aggregator does. Only the router benchmark's identity-path arms use it.
   */
  frontProxyCaCert: string;
  frontProxyCaKey: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
  /** CN system:kube-controller-manager, which RBAC's bootstrap policy already grants what it needs. */
  controllerManagerCert: string;
  controllerManagerKey: string;
  serviceAccountKey: string;
  serviceAccountPublicKey: string;
}

export interface PkiOptions {
  /** Names the CA, so certificates of different cells are told apart. */
  name: string;
  /** Subject alternative names of the serving certificate beyond loopback and the in-cluster names. */
  extraSans?: readonly string[];
  /** The first address of the service range: in-cluster clients reach the apiserver there. */
  serviceIp: string;
  openssl?: string;
}

const IN_CLUSTER_NAMES = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'localhost'];

/**
 * Creates a CA, a serving certificate, client certificates and service-account keys in `dir`. Keys are
 * P-256 (fast to make, accepted everywhere in Kubernetes); certificates are signed by `openssl`, because
 * Node's crypto can read X.509 but not issue it.
 */
export function createApiserverPki(dir: string, options: PkiOptions): ApiserverPki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const openssl = options.openssl ?? 'openssl';
  const path = (file: string) => join(dir, file);
  const pki: ApiserverPki = {
    caCert: path('ca.crt'),
    caKey: path('ca.key'),
    servingCert: path('apiserver.crt'),
    servingKey: path('apiserver.key'),
    adminCert: path('admin.crt'),
    adminKey: path('admin.key'),
    componentCerts: Object.fromEntries(
      CELL_COMPONENTS.map((component) => [
        component,
        { cert: path(`${localCellUser(component)}.crt`), key: path(`${localCellUser(component)}.key`) },
      ]),
    ) as Record<CellComponent, { cert: string; key: string }>,
    frontProxyCaCert: path('front-proxy-ca.crt'),
    frontProxyCaKey: path('front-proxy-ca.key'),
    frontProxyClientCert: path('front-proxy-client.crt'),
    frontProxyClientKey: path('front-proxy-client.key'),
    controllerManagerCert: path('kube-controller-manager.crt'),
    controllerManagerKey: path('kube-controller-manager.key'),
    serviceAccountKey: path('service-account.key'),
    serviceAccountPublicKey: path('service-account.pub'),
  };

  const ca = { cert: pki.caCert, key: pki.caKey };
  const frontProxyCa = { cert: pki.frontProxyCaCert, key: pki.frontProxyCaKey };
  createCa(openssl, ca, `${options.name}-ca`);
  createCa(openssl, frontProxyCa, `${options.name}-front-proxy-ca`);

  const sans = [
    'IP:127.0.0.1',
    `IP:${options.serviceIp}`,
    ...IN_CLUSTER_NAMES.map((name) => `DNS:${name}`),
    ...(options.extraSans ?? []),
  ];
  issue(openssl, ca, pki.servingKey, pki.servingCert, `/CN=${options.name}-apiserver`, [
    `subjectAltName=${sans.join(',')}`,
    'extendedKeyUsage=serverAuth',
  ]);
  issue(openssl, ca, pki.adminKey, pki.adminCert, '/O=system:masters/CN=admin', [
    'extendedKeyUsage=clientAuth',
  ]);
  for (const component of CELL_COMPONENTS) {
    const { cert, key } = pki.componentCerts[component];
    issue(openssl, ca, key, cert, `/O=system:monitoring/CN=${localCellUser(component)}`, [
      'extendedKeyUsage=clientAuth',
    ]);
  }
  issue(openssl, frontProxyCa, pki.frontProxyClientKey, pki.frontProxyClientCert, '/CN=front-proxy-client', [
    'extendedKeyUsage=clientAuth',
  ]);
  issue(
    openssl,
    ca,
    pki.controllerManagerKey,
    pki.controllerManagerCert,
    '/CN=system:kube-controller-manager',
    ['extendedKeyUsage=clientAuth'],
  );

  const serviceAccount = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  writeFileSync(pki.serviceAccountKey, serviceAccount.privateKey.export({ type: 'pkcs8', format: 'pem' }), {
    mode: 0o600,
  });
  writeFileSync(
    pki.serviceAccountPublicKey,
    serviceAccount.publicKey.export({ type: 'spki', format: 'pem' }),
  );
  return pki;
}

function writeKey(file: string): void {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
}

/** A self-signed CA certificate and its key. */
function createCa(openssl: string, ca: { cert: string; key: string }, name: string): void {
  writeKey(ca.key);
  runOpenssl(openssl, [
    'req', '-x509', '-new', '-key', ca.key, '-sha256', '-days', '3650',
    '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    '-out', ca.cert,
  ]); // prettier-ignore
}

function issue(
  openssl: string,
  ca: { cert: string; key: string },
  keyFile: string,
  certFile: string,
  subject: string,
  extensions: readonly string[],
): void {
  writeKey(keyFile);
  runOpenssl(openssl, [
    'req', '-x509', '-new', '-key', keyFile, '-sha256', '-days', '365',
    '-CA', ca.cert, '-CAkey', ca.key,
    '-subj', subject,
    '-addext', 'basicConstraints=critical,CA:FALSE',
    '-addext', 'keyUsage=critical,digitalSignature,keyEncipherment',
    ...extensions.flatMap((extension) => ['-addext', extension]),
    '-out', certFile,
  ]); // prettier-ignore
}

function runOpenssl(openssl: string, args: readonly string[]): void {
  const result = spawnSync(openssl, args, { encoding: 'utf8' });
  if (result.error) {
    throw new E2eError(
      E2eErrorCode.Pki,
      `cannot run ${openssl} (${result.error.message}); install OpenSSL 3 (Debian: apt-get install openssl)`,
      { cause: result.error },
    );
  }
  if (result.status !== 0) {
    const detail = result.stderr.trim().split('\n').slice(-3).join(' / ');
    throw new E2eError(E2eErrorCode.Pki, `openssl ${args[0]} failed (exit ${result.status}): ${detail}`);
  }
}
