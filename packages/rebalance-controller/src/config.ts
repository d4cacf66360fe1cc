import { parseArgs } from 'node:util';

import { ManagerConfigSchema } from '@cellfed/controller-kit';
import { DEFAULT_CELLSET_NAME, DEFAULT_SECRET_NAMESPACE } from '@cellfed/hashing';
import { z } from 'zod';

import { parseDuration } from './duration.ts';
import { RebalanceError, RebalanceErrorCode } from './errors.ts';

const duration = (flag: string) =>
  z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return undefined;
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

const positiveInt = (flag: string, max: number) =>
  z
    .number({ error: `--${flag} must be a whole number` })
    .int({ error: `--${flag} must be a whole number` })
    .min(1, { error: `--${flag} must be at least 1` })
    .max(max, { error: `--${flag} must be at most ${max}` });

/** Everything the rebalance controller process is configured with; parsed once, in main.ts. */
export const RebalanceConfigSchema = z
  .object({
    /** The control plane kubeconfig; the in-cluster service account when absent. */
    kubeconfig: z.string().min(1).optional(),
    cellSetName: z.string().min(1).default(DEFAULT_CELLSET_NAME),
    secretNamespace: z.string().min(1).default(DEFAULT_SECRET_NAMESPACE),
    window: positiveInt('window', 1000).default(32),
    ratePerSecond: z
      .number({ error: '--rate must be a number of objects per second' })
      .positive({ error: '--rate must be above 0' })
      .optional(),
    deleteAfterMs: duration('delete-after').transform((ms) => ms ?? 12 * 3_600_000),
    scanQps: positiveInt('scan-qps', 100_000).default(1000),
    mirrorResyncMs: duration('mirror-resync').transform((ms) => ms ?? 60_000),
    manager: ManagerConfigSchema,
  })
  .strict();

export type RebalanceConfig = z.output<typeof RebalanceConfigSchema>;

export const USAGE = `usage: rebalance-controller [options]
  --kubeconfig FILE                control plane kubeconfig (default: in-cluster service account)
  --cellset NAME                   the CellSet (default default)
  --secret-namespace NS            where the cells' kubeconfig Secrets, the routers' Leases and the
                                   leader Lease are (default cellfed-system)
  --window N                       objects moved at once at most (default 32)
  --rate N                         moves started per second at most (default: no limit)
  --delete-after DURATION          how long an old copy stays after its move (default 12h)
  --scan-qps N                     objects per second taken from the low-priority scan lane (default 1000)
  --mirror-resync DURATION         how often each cell is compared with the control plane's shared
                                   objects although no namespace or CRD changed (default 60s)
  --leader-elect BOOL              leader election (default true)
  --leader-elect-lease-duration D  (default 15s)
  --leader-elect-renew-deadline D  (default 10s)
  --leader-elect-retry-period D    (default 2s)
  --http-port N                    /metrics, /healthz, /readyz (default 8080; 0 picks one)
  --log-level LEVEL                pino level (default info)`;

/** Reads the command line into the config; every problem in one line. */
export function parseRebalanceArgs(argv: string[]): RebalanceConfig {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      options: Object.fromEntries(
        [
          'kubeconfig',
          'cellset',
          'secret-namespace',
          'window',
          'rate',
          'delete-after',
          'scan-qps',
          'mirror-resync',
          'leader-elect',
          'leader-elect-lease-duration',
          'leader-elect-renew-deadline',
          'leader-elect-retry-period',
          'http-port',
          'log-level',
        ].map((name) => [name, { type: 'string' as const }]),
      ),
    }).values as Record<string, string | undefined>;
  } catch (error) {
    throw new RebalanceError(RebalanceErrorCode.InvalidConfig, (error as Error).message.split('\n')[0]!);
  }
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  const ms = (flag: string) => {
    const text = values[flag];
    if (text === undefined) return undefined;
    const parsed = parseDuration(text);
    if (parsed === undefined)
      throw new RebalanceError(
        RebalanceErrorCode.InvalidConfig,
        `--${flag} must be a duration such as 15s; got "${text}"`,
      );
    return parsed;
  };
  const leaderElect = values['leader-elect'];
  if (leaderElect !== undefined && leaderElect !== 'true' && leaderElect !== 'false')
    throw new RebalanceError(
      RebalanceErrorCode.InvalidConfig,
      `--leader-elect must be true or false; got "${leaderElect}"`,
    );
  const secretNamespace = values['secret-namespace'];
  const result = RebalanceConfigSchema.safeParse({
    kubeconfig: values.kubeconfig,
    cellSetName: values.cellset,
    secretNamespace,
    window: number(values.window),
    ratePerSecond: number(values.rate),
    deleteAfterMs: values['delete-after'],
    scanQps: number(values['scan-qps']),
    mirrorResyncMs: values['mirror-resync'],
    manager: {
      httpPort: number(values['http-port']),
      logLevel: values['log-level'],
      leaderElection: {
        enabled: leaderElect !== 'false',
        namespace: secretNamespace ?? DEFAULT_SECRET_NAMESPACE,
        name: `cellfed-rebalance-controller-${values.cellset ?? DEFAULT_CELLSET_NAME}`,
        leaseDurationMs: ms('leader-elect-lease-duration') ?? 15_000,
        renewDeadlineMs: ms('leader-elect-renew-deadline') ?? 10_000,
        retryPeriodMs: ms('leader-elect-retry-period') ?? 2_000,
      },
    },
  });
  if (result.success) return result.data;
  throw new RebalanceError(
    RebalanceErrorCode.InvalidConfig,
    result.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`).join('; '),
  );
}
