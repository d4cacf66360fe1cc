import { fileURLToPath } from 'node:url';

import { parseE2eConfig } from '@cellfed/cells/e2e-config.ts';
import { envFilePath, readEnvFile } from '@cellfed/cells/env-file.ts';
import { KindProvider } from '@cellfed/cells/kind/kind-provider.ts';
import { createLogger } from '@cellfed/cells/log.ts';
import { CHART_CRD_DIR } from '@cellfed/cells/paths.ts';
import { createProvider } from '@cellfed/cells/providers.ts';
import { E2E_ENV_FILE, E2E_OWNED_DIR, E2E_SKIP_REASON } from './helpers/e2e-env.ts';

const DEFAULT_DIR = fileURLToPath(new URL('../../tmp/e2e', import.meta.url));

/** Brings the environment up once for the whole run; the tests find it through E2E_ENV_FILE. */
export default async function globalSetup(): Promise<void> {
  const config = parseE2eConfig(process.env, DEFAULT_DIR);
  const log = createLogger();
  if (config.existingDir) {
    readEnvFile(config.existingDir); // fails now, with the reason, if it is not an environment
    process.env[E2E_ENV_FILE] = envFilePath(config.existingDir);
    log.info({ dir: config.existingDir }, 'e2e: using the environment that is already up');
    return;
  }
  const provider = createProvider(config.provider, {
    toolsDir: config.toolsDir,
    crdDir: CHART_CRD_DIR,
    nodeImage: config.nodeImage,
  });
  if (provider instanceof KindProvider) {
    const reason = await provider.unavailableReason();
    if (reason) {
      process.env[E2E_SKIP_REASON] = `provider kind: ${reason}`;
      log.warn({ provider: 'kind' }, `e2e: skipping every suite: ${reason}`);
      return;
    }
  }
  const env = await provider.up({
    dir: config.dir,
    cells: config.cells,
    controllerManager: true,
    images: config.images,
    log,
  });
  process.env[E2E_ENV_FILE] = envFilePath(env.dir);
  if (!config.keep) process.env[E2E_OWNED_DIR] = env.dir;
}
