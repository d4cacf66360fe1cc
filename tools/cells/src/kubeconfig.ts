import { readFileSync } from 'node:fs';

/** A kubeconfig as written to disk (JSON, which every YAML reader accepts). */
export interface Kubeconfig {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
  users: {
    name: string;
    user: { 'client-certificate-data': string; 'client-key-data': string } | { token: string };
  }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  'current-context': string;
}

export interface KubeconfigParams {
  /** Names the cluster, the context and (with `user`) the user. */
  name: string;
  server: string;
  user: string;
  caCert: string;
  /** A client certificate and its key (PEM), or a bearer token. */
  credentials: { clientCert: string; clientKey: string } | { token: string };
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** A self-contained kubeconfig: certificates inline, so it can be copied into a Secret as it is. */
export function renderKubeconfig(params: KubeconfigParams): Kubeconfig {
  const user = `${params.name}-${params.user}`;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: params.name,
        cluster: { server: params.server, 'certificate-authority-data': base64(params.caCert) },
      },
    ],
    users: [
      {
        name: user,
        user:
          'token' in params.credentials
            ? { token: params.credentials.token }
            : {
                'client-certificate-data': base64(params.credentials.clientCert),
                'client-key-data': base64(params.credentials.clientKey),
              },
      },
    ],
    contexts: [{ name: params.name, context: { cluster: params.name, user } }],
    'current-context': params.name,
  };
}

/** As {@link renderKubeconfig}, reading the PEM files. */
export function kubeconfigFromFiles(params: {
  name: string;
  server: string;
  user: string;
  caCertFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}): Kubeconfig {
  return renderKubeconfig({
    name: params.name,
    server: params.server,
    user: params.user,
    caCert: readFileSync(params.caCertFile, 'utf8'),
    credentials: {
      clientCert: readFileSync(params.clientCertFile, 'utf8'),
      clientKey: readFileSync(params.clientKeyFile, 'utf8'),
    },
  });
}
