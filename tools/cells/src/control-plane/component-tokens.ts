import { readFileSync, writeFileSync } from 'node:fs';

import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

import {
  COMPONENTS,
  COMPONENTS_NAMESPACE,
  componentServiceAccount,
  type ComponentName,
} from '../chart/component-rbac.ts';

/** How long a component's token lasts: longer than any test run or `npm start` session. */
const TOKEN_SECONDS = 7 * 24 * 3600;

/**
 * A kubeconfig per component for the control plane, as the component has in a cluster: its chart
 * ServiceAccount's token (a TokenRequest), so the chart's bindings are all it may do. The ServiceAccounts
 * must exist (the chart's RBAC applied). Answers the files, by component.
 */
export async function writeComponentKubeconfigs(options: {
  /** The control plane's admin kubeconfig: who asks for the tokens. */
  adminKubeconfigFile: string;
  server: string;
  caCertFile: string;
  file: (component: ComponentName) => string;
}): Promise<Record<ComponentName, string>> {
  const config = new KubeConfig();
  config.loadFromFile(options.adminKubeconfigFile);
  const core = config.makeApiClient(CoreV1Api);
  const files = {} as Record<ComponentName, string>;
  for (const component of COMPONENTS) {
    const request = await core.createNamespacedServiceAccountToken({
      name: componentServiceAccount(component),
      namespace: COMPONENTS_NAMESPACE,
      body: { spec: { audiences: [], expirationSeconds: TOKEN_SECONDS } },
    });
    const name = `control-plane-${component}`;
    const kubeconfig = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'control-plane',
          cluster: {
            server: options.server,
            'certificate-authority-data': readFileSync(options.caCertFile).toString('base64'),
          },
        },
      ],
      users: [{ name, user: { token: request.status!.token } }],
      contexts: [{ name: 'control-plane', context: { cluster: 'control-plane', user: name } }],
      'current-context': 'control-plane',
    };
    files[component] = options.file(component);
    writeFileSync(files[component], `${JSON.stringify(kubeconfig, null, 2)}\n`, { mode: 0o600 });
  }
  return files;
}
