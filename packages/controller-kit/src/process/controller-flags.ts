import { parseArgs } from 'node:util';

import { z } from 'zod';

import { ControllerKitError, ControllerKitErrorCode } from '../errors.ts';
import { ManagerConfigSchema } from './manager-config.ts';
import { parseDuration } from './duration.ts';
import { TracingConfigSchema } from '../tracing/tracing.ts';

/** The flags every cellfed controller takes, besides its own (see {@link MANAGER_USAGE}). */
const MANAGER_FLAGS = [
  'kubeconfig',
  'cellset',
  'secret-namespace',
  'leader-elect',
  'leader-elect-lease-duration',
  'leader-elect-renew-deadline',
  'leader-elect-retry-period',
  'http-port',
  'log-level',
  'otlp-endpoint',
  'trace-sample-ratio',
] as const;

/** Usage lines of the flags every controller takes. */
export const MANAGER_USAGE = `  --kubeconfig FILE                control plane kubeconfig (default: in-cluster service account)
  --cellset NAME                   the CellSet (default default)
  --secret-namespace NS            where the cells' kubeconfig Secrets, the routers' Leases and the
                                   leader Lease are (default cellfed-system)
  --leader-elect BOOL              leader election (default true)
  --leader-elect-lease-duration D  (default 10s: a crashed leader is replaced within 12s)
  --leader-elect-renew-deadline D  (default 7s)
  --leader-elect-retry-period D    (default 2s)
  --http-port N                    /metrics, /healthz, /readyz (default 8080; 0 picks one)
  --log-level LEVEL                pino level (default info)
  --otlp-endpoint URL              send a trace span per reconcile to this OTLP/HTTP collector
                                   (http://collector:4318; default: tracing off)
  --trace-sample-ratio R           share of traces recorded, 0 to 1 (default 1)`;

/** The command line of a controller: the common flags read, its own flags as text for its schema. */
export interface ControllerFlags {
  /** Every flag given, as text. */
  values: Record<string, string | undefined>;
  /** The input of the controller's common settings, for its zod schema (see {@link ManagerConfigSchema}). */
  common: {
    kubeconfig: string | undefined;
    cellSetName: string | undefined;
    secretNamespace: string | undefined;
    manager: Record<string, unknown>;
    tracing: Record<string, unknown>;
  };
}

/**
 * Reads a controller's command line: the flags every controller takes and `own`. Throws with one readable
 * line for an unknown flag, a missing value or a malformed duration or boolean; the numbers and the rest
 * are the schema's to check. The leader Lease is `cellfed-<controller>-<cellset>`.
 */
export function readControllerFlags(
  controller: string,
  argv: string[],
  own: readonly string[],
): ControllerFlags {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      options: Object.fromEntries(
        [...MANAGER_FLAGS, ...own].map((name) => [name, { type: 'string' as const }]),
      ),
    }).values as Record<string, string | undefined>;
  } catch (error) {
    throw invalid((error as Error).message.split('\n')[0]!, error);
  }
  const ms = (flag: string) => {
    const text = values[flag];
    if (text === undefined) return undefined;
    const parsed = parseDuration(text);
    if (parsed === undefined) throw invalid(`--${flag} must be a duration such as 15s; got "${text}"`);
    return parsed;
  };
  const leaderElect = values['leader-elect'];
  if (leaderElect !== undefined && leaderElect !== 'true' && leaderElect !== 'false')
    throw invalid(`--leader-elect must be true or false; got "${leaderElect}"`);
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  const secretNamespace = values['secret-namespace'];
  return {
    values,
    common: {
      kubeconfig: values.kubeconfig,
      cellSetName: values.cellset,
      secretNamespace,
      manager: {
        httpPort: number(values['http-port']),
        logLevel: values['log-level'],
        leaderElection: {
          enabled: leaderElect !== 'false',
          namespace: secretNamespace ?? 'cellfed-system',
          name: `cellfed-${controller}-${values.cellset ?? 'default'}`,
          leaseDurationMs: ms('leader-elect-lease-duration') ?? 10_000,
          renewDeadlineMs: ms('leader-elect-renew-deadline') ?? 7_000,
          retryPeriodMs: ms('leader-elect-retry-period') ?? 2_000,
        },
      },
      tracing: {
        otlpEndpoint: values['otlp-endpoint'],
        sampleRatio: number(values['trace-sample-ratio']),
      },
    },
  };
}

const invalid = (message: string, cause?: unknown) =>
  new ControllerKitError(ControllerKitErrorCode.InvalidConfig, message, cause ? { cause } : undefined);

/** A zod field for a duration flag: milliseconds, `fallback` when absent; a readable issue when malformed. */
export function durationFlag(flag: string, fallbackMs: number) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return fallbackMs;
      const ms = parseDuration(text);
      if (ms === undefined || ms <= 0) {
        ctx.addIssue({
          code: 'custom',
          message: `--${flag} must be a duration such as 12h, 30s or 1h30m; got "${text}"`,
        });
        return z.NEVER;
      }
      return ms;
    });
}

/** A zod field for a whole-number flag between 1 and `max`. */
export function positiveIntFlag(flag: string, max: number) {
  return z
    .number({ error: `--${flag} must be a whole number` })
    .int({ error: `--${flag} must be a whole number` })
    .min(1, { error: `--${flag} must be at least 1` })
    .max(max, { error: `--${flag} must be at most ${max}` });
}

/**
 * The settings every controller has, from the flags every controller takes; a controller's own schema
 * extends it (`ControllerConfigSchema.extend({...}).strict()`).
 */
export const ControllerConfigSchema = z.object({
  /** The control plane kubeconfig; the in-cluster service account when absent. */
  kubeconfig: z.string().min(1).optional(),
  cellSetName: z.string().min(1).default('default'),
  secretNamespace: z.string().min(1).default('cellfed-system'),
  manager: ManagerConfigSchema,
  tracing: TracingConfigSchema,
});

/** Every issue of a failed parse, in one line: `path: problem; …`. */
export function issuesLine(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`).join('; ');
}
