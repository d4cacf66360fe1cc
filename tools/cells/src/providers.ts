import type { ProviderName } from './env-file.ts';
import { CHART_DIR } from './chart/helm-chart.ts';
import { KindProvider } from './kind/kind-provider.ts';
import { LocalProvider } from './local/local-provider.ts';
import type { Provider } from './provider.ts';

export interface ProviderConfig {
  /** Directory of the tools scripts/build-tools.sh built. */
  toolsDir: string | undefined;
  crdDir: string;
  /** Where the local provider's etcd keeps its data (default /dev/shm). */
  runtimeRoot?: string | undefined;
  /** kind's node image (kind's default when absent). */
  nodeImage?: string | undefined;
}

/** The provider by name. */
export function createProvider(name: ProviderName, config: ProviderConfig): Provider {
  switch (name) {
    case 'local':
      return new LocalProvider({
        toolsDir: config.toolsDir,
        crdDir: config.crdDir,
        ...(config.runtimeRoot ? { runtimeRoot: config.runtimeRoot } : {}),
      });
    case 'kind':
      return new KindProvider({
        crdDir: config.crdDir,
        chartDir: CHART_DIR,
        ...(config.toolsDir ? { toolsDir: config.toolsDir } : {}),
        ...(config.nodeImage ? { nodeImage: config.nodeImage } : {}),
      });
  }
}
