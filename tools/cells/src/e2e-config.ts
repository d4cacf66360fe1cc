import { resolve } from 'node:path';

import { z } from 'zod';

import { PROVIDERS } from './env-file.ts';
import { E2eError, E2eErrorCode } from './errors.ts';

/** The e2e suite's settings, from the environment of `nx run e2e:e2e`, parsed once in the global setup. */
const E2eConfigSchema = z.object({
  CELLFED_E2E_PROVIDER: z.enum(PROVIDERS).default('local'),
  /** Where the suite brings its environment up (default: tmp/e2e in the repository). */
  CELLFED_E2E_DIR: z.string().min(1).optional(),
  CELLFED_E2E_CELLS: z.coerce.number().int().min(1).max(16).default(3),
  /** Use an environment that is already up (its directory); the suite neither starts nor stops it. */
  CELLFED_E2E_ENV: z.string().min(1).optional(),
  /** Leave the environment running after the suite, to look at it. */
  CELLFED_E2E_KEEP: z.stringbool().default(false),
  CELLFED_TOOLS_BIN: z.string().min(1).optional(),
  /** Images to load into the kind control plane (comma-separated), whose chart runs them. */
  CELLFED_E2E_IMAGES: z.string().default(''),
  /** kind's node image (kind's default when absent). */
  CELLFED_E2E_NODE_IMAGE: z.string().min(1).optional(),
});

export interface E2eConfig {
  provider: (typeof PROVIDERS)[number];
  dir: string;
  cells: number;
  existingDir: string | undefined;
  keep: boolean;
  toolsDir: string | undefined;
  images: string[];
  nodeImage: string | undefined;
}

export function parseE2eConfig(env: NodeJS.ProcessEnv, defaultDir: string): E2eConfig {
  const result = E2eConfigSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new E2eError(E2eErrorCode.InvalidArguments, `e2e settings: ${problems.join('; ')}`);
  }
  const config = result.data;
  return {
    provider: config.CELLFED_E2E_PROVIDER,
    dir: resolve(config.CELLFED_E2E_DIR ?? defaultDir),
    cells: config.CELLFED_E2E_CELLS,
    existingDir: config.CELLFED_E2E_ENV ? resolve(config.CELLFED_E2E_ENV) : undefined,
    keep: config.CELLFED_E2E_KEEP,
    toolsDir: config.CELLFED_TOOLS_BIN,
    images: config.CELLFED_E2E_IMAGES.split(',').filter(Boolean),
    nodeImage: config.CELLFED_E2E_NODE_IMAGE,
  };
}
