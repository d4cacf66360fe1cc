import { readFileSync, writeFileSync } from 'node:fs';

import { COMPONENTS_NAMESPACE } from '../chart/cell-identities.ts';
import { COMPONENTS, componentServiceAccount, type ComponentName } from '../chart/component-rbac.ts';
import { renderKubeconfig } from '../kubeconfig.ts';
import { serviceAccountToken } from './service-account-token.ts';

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
  const caCert = readFileSync(options.caCertFile, 'utf8');
  const files = {} as Record<ComponentName, string>;
  for (const component of COMPONENTS) {
    const token = await serviceAccountToken(
      options.adminKubeconfigFile,
      COMPONENTS_NAMESPACE,
      componentServiceAccount(component),
      TOKEN_SECONDS,
    );
    const kubeconfig = renderKubeconfig({
      name: 'control-plane',
      server: options.server,
      user: component,
      caCert,
      credentials: { token },
    });
    files[component] = options.file(component);
    writeFileSync(files[component], `${JSON.stringify(kubeconfig, null, 2)}\n`, { mode: 0o600 });
  }
  return files;
}
