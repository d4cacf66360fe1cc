import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { z } from 'zod';

import type { ComponentName } from './chart/component-rbac.ts';
import { E2eError, E2eErrorCode } from './errors.ts';

/** The id of the router control plane in env.json; cells are `cell-1` … `cell-N`. */
export const CONTROL_PLANE_ID = 'control-plane';
export const ENV_FILE = 'env.json';

/** Ids of `count` cells: cell-1 … cell-N. */
export function cellIds(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `cell-${index + 1}`);
}

/** The first cell id not taken: the id of the next cell added. */
export function nextCellId(taken: readonly string[]): string {
  for (let n = 1; ; n++) if (!taken.includes(`cell-${n}`)) return `cell-${n}`;
}

export const PROVIDERS = ['local', 'kind'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

const ApiserverEntrySchema = z.object({
  id: z.string().min(1),
  /** Reachable from where the tests run. */
  url: z.url(),
  /** Absolute path of a kubeconfig with admin credentials (CN admin, O system:masters). */
  kubeconfig: z.string().min(1),
});

/** What `cells up` writes to DIR/env.json and every test reads: the control plane and each cell. */
export const EnvFileSchema = z.object({
  version: z.literal(1),
  provider: z.enum(PROVIDERS),
  dir: z.string().min(1),
  createdAt: z.string(),
  controlPlane: ApiserverEntrySchema,
  cells: z.array(ApiserverEntrySchema).min(1),
  /** The router the chart runs in the control-plane cluster (kind with images), published on the host. */
  router: ApiserverEntrySchema.optional(),
  /**
   * kubeconfigs of cellfed's components in the control plane (local provider), bound only by the chart's
   * RBAC: the router and the controllers the tests start run with these, never as admin.
   */
  components: z
    .object({
      router: z.string(),
      'rebalance-controller': z.string(),
      'backup-controller': z.string(),
      'quota-controller': z.string(),
    })
    .optional(),
  /** Name of the CellSet in the control plane that lists the cells. */
  cellSet: z.string(),
  /** Namespace of the cells' kubeconfig Secrets in the control plane. */
  secretNamespace: z.string(),
});

export type ApiserverEntry = z.output<typeof ApiserverEntrySchema>;
export type EnvFile = z.output<typeof EnvFileSchema>;

/**
 * The control-plane kubeconfig a component runs with: its own, bound only by the chart's RBAC. An
 * environment without one (made before components had identities) is refused, never served as admin.
 */
export function componentKubeconfig(env: EnvFile, component: ComponentName): string {
  const file = env.components?.[component];
  if (!file)
    throw new E2eError(
      E2eErrorCode.InvalidEnvironment,
      `${env.dir} has no least-privilege identity for the ${component}: run \`npm run cells -- down\` and \`up\` again`,
    );
  return file;
}

export function envFilePath(dir: string): string {
  return join(dir, ENV_FILE);
}

/** Reads DIR/env.json; a missing or malformed file is an error that says which. */
export function readEnvFile(dir: string): EnvFile {
  return readJsonFile(envFilePath(dir), EnvFileSchema, 'env.json');
}

export function writeEnvFile(env: EnvFile): void {
  writeJsonFile(envFilePath(env.dir), env);
}

/** Reads and validates a JSON file written by this package. */
export function readJsonFile<T extends z.ZodType>(file: string, schema: T, what: string): z.output<T> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new E2eError(
      E2eErrorCode.InvalidEnvironment,
      `${what} not found at ${file}: run \`npm run cells -- up\``,
      {
        cause: error,
      },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new E2eError(E2eErrorCode.InvalidEnvironment, `${file} is not JSON: ${(error as Error).message}`);
  }
  const result = schema.safeParse(json);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
    throw new E2eError(
      E2eErrorCode.InvalidEnvironment,
      `${file} is not a valid ${what}: ${problems.join('; ')}`,
    );
  }
  return result.data;
}

/** Writes JSON atomically, so a reader never sees half a file. */
export function writeJsonFile(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.partial`;
  writeFileSync(partial, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(partial, file);
}
