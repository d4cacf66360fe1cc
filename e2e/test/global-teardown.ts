import { parseE2eConfig } from '@cellfed/cells/e2e-config.ts';
import { createLogger } from '@cellfed/cells/log.ts';
import { CHART_CRD_DIR } from '@cellfed/cells/paths.ts';
import { createProvider } from '@cellfed/cells/providers.ts';
import { E2E_OWNED_DIR } from './helpers/e2e-env.ts';

/** Takes down what the global setup brought up, unless CELLFED_E2E_KEEP or CELLFED_E2E_ENV said otherwise. */
export default async function globalTeardown(): Promise<void> {
  const dir = process.env[E2E_OWNED_DIR];
  if (!dir) return;
  const config = parseE2eConfig(process.env, dir);
  const provider = createProvider(config.provider, { toolsDir: config.toolsDir, crdDir: CHART_CRD_DIR });
  await provider.down({ dir, log: createLogger() });
}
