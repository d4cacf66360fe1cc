import { dirname } from 'node:path';

import { parseE2eConfig } from '@cellfed/cells/e2e-config.ts';
import { readEnvFile, type EnvFile } from '@cellfed/cells/env-file.ts';
import { LocalProvider } from '@cellfed/cells/local/local-provider.ts';
import { CHART_CRD_DIR } from '@cellfed/cells/paths.ts';

/** Set by the global setup for the test workers (environment variables are what crosses that boundary). */
export const E2E_ENV_FILE = 'CELLFED_E2E_ENV_FILE';
export const E2E_SKIP_REASON = 'CELLFED_E2E_SKIP_REASON';
export const E2E_OWNED_DIR = 'CELLFED_E2E_OWNED_DIR';

/** The environment the global setup brought up. */
export function e2eEnv(): EnvFile {
  const file = process.env[E2E_ENV_FILE];
  if (!file) throw new Error(`${E2E_ENV_FILE} is not set: run the suite with \`nx run e2e:e2e\``);
  return readEnvFile(dirname(file));
}

/**
 * `describe` for suites that need cells: skipped, with the reason in the suite's name, when the provider
 * cannot run here (kind without a Docker engine).
 */
export function describeE2e(name: string, body: () => void): void {
  const reason = process.env[E2E_SKIP_REASON];
  if (!reason) {
    describe(name, body);
    return;
  }
  // The body reads env.json to name its tests, and there is none: report one skipped test with the reason.
  describe.skip(name, () => {
    it.skip(`skipped: ${reason}`, () => undefined);
  });
}

/**
 * `describe` for suites of the chart's own router and controllers, running in a kind control plane
 * (`nx run e2e:e2e-kind`): skipped, with the reason, anywhere else.
 */
export function describeInCluster(name: string, body: (env: InClusterEnv) => void): void {
  const reason =
    process.env[E2E_SKIP_REASON] ??
    (() => {
      const env = e2eEnv();
      return env.provider === 'kind' && env.router ? undefined : 'needs the chart in a kind control plane';
    })();
  if (!reason) {
    describe(name, () => body(e2eEnv() as InClusterEnv));
    return;
  }
  describe.skip(name, () => {
    it.skip(`skipped: ${reason}`, () => undefined);
  });
}

export type InClusterEnv = EnvFile & { router: NonNullable<EnvFile['router']> };

/**
 * Adding cells to the running environment, which only the local provider can do: `runnable` is `it` when it
 * can and `it.skip` when not.
 */
export function cellAdder(env: EnvFile): { provider: LocalProvider; runnable: jest.It } {
  return {
    provider: new LocalProvider({
      toolsDir: parseE2eConfig(process.env, env.dir).toolsDir,
      crdDir: CHART_CRD_DIR,
    }),
    runnable: env.provider === 'local' && env.cells.length >= 3 ? it : it.skip,
  };
}
