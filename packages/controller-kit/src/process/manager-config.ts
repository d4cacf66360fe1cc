import { DEFAULT_SECRET_NAMESPACE } from '@cellfed/api';
import { z } from 'zod';

import { ControllerKitError, ControllerKitErrorCode } from '../errors.ts';
import { LEADER_ELECTION_DEFAULTS } from '../leader/leader-elector.ts';

const duration = (what: string) =>
  z
    .number({ error: `${what} must be a number of milliseconds` })
    .int()
    .positive();

/** The pino levels a process may log at (`--log-level`). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/** What every cellfed controller process is configured with; main.ts parses it once. */
export const ManagerConfigSchema = z
  .object({
    /** Address of /metrics, /healthz and /readyz. */
    httpHost: z.string().min(1).default('0.0.0.0'),
    httpPort: z.number().int().min(0).max(65535).default(8080),
    logLevel: z.enum(LOG_LEVELS).default('info'),
    /** After SIGTERM, how long work in hand may take before it is aborted. */
    gracefulShutdownMs: duration('gracefulShutdownMs').default(30_000),
    leaderElection: z
      .object({
        enabled: z.boolean().default(true),
        namespace: z.string().min(1).default(DEFAULT_SECRET_NAMESPACE),
        /** The Lease's name; defaults to the controller's name. */
        name: z.string().min(1).optional(),
        leaseDurationMs: duration('leaseDurationMs').default(LEADER_ELECTION_DEFAULTS.leaseDurationMs),
        renewDeadlineMs: duration('renewDeadlineMs').default(LEADER_ELECTION_DEFAULTS.renewDeadlineMs),
        retryPeriodMs: duration('retryPeriodMs').default(LEADER_ELECTION_DEFAULTS.retryPeriodMs),
      })
      .strict()
      .default({ enabled: true, namespace: DEFAULT_SECRET_NAMESPACE, ...LEADER_ELECTION_DEFAULTS })
      .check((ctx) => {
        const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = ctx.value;
        if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > retryPeriodMs)) {
          ctx.issues.push({
            code: 'custom',
            input: ctx.value,
            message: `needs leaseDurationMs > renewDeadlineMs > retryPeriodMs; got ${leaseDurationMs} > ${renewDeadlineMs} > ${retryPeriodMs}`,
          });
        }
      }),
  })
  .strict();

export type ManagerConfig = z.output<typeof ManagerConfigSchema>;

/** Parses the configuration; every problem is in the one error message, as `path: problem`. */
export function parseManagerConfig(input: unknown): ManagerConfig {
  const result = ManagerConfigSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map(
    (issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`,
  );
  throw new ControllerKitError(
    ControllerKitErrorCode.InvalidConfig,
    `invalid configuration: ${problems.join('; ')}`,
  );
}
