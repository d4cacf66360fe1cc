import { DEFAULT_CELLSET_NAME, DEFAULT_SECRET_NAMESPACE } from '@cellfed/api';
import { z } from 'zod';

import { ControllerKitError, ControllerKitErrorCode } from '../errors.ts';
import { ManagerConfigSchema } from './manager-config.ts';
import { formatDuration, parseDuration } from './duration.ts';
import { readFlags, usageOf, type Flag } from './flags.ts';
import { LEADER_ELECTION_DEFAULTS } from '../leader/leader-elector.ts';
import { TracingConfigSchema } from '../tracing/tracing.ts';

/** Flags the router and every controller take alike. */
export const KUBECONFIG_FLAG: Flag = {
  name: 'kubeconfig',
  value: 'FILE',
  help: 'control plane kubeconfig',
  default: 'the in-cluster service account',
};
export const CELLSET_FLAG: Flag = {
  name: 'cellset',
  value: 'NAME',
  help: 'the CellSet',
  default: DEFAULT_CELLSET_NAME,
};
export const HTTP_PORT_FLAG: Flag = {
  name: 'http-port',
  value: 'N',
  help: '/metrics, /healthz, /readyz; 0 picks one',
  default: '8080',
};
export const LOG_LEVEL_FLAG: Flag = {
  name: 'log-level',
  value: 'LEVEL',
  help: 'pino level',
  default: 'info',
};
export const TRACE_SAMPLE_RATIO_FLAG: Flag = {
  name: 'trace-sample-ratio',
  value: 'R',
  help: 'share of new traces recorded, 0 to 1; a caller’s sampled trace is always followed',
  default: '1',
};

/** The flags every cellfed controller takes, after its own. */
export const CONTROLLER_FLAGS: readonly Flag[] = [
  KUBECONFIG_FLAG,
  CELLSET_FLAG,
  {
    name: 'secret-namespace',
    value: 'NS',
    help: "where the cells' kubeconfig Secrets, the routers' Leases and the leader Lease are",
    default: DEFAULT_SECRET_NAMESPACE,
  },
  { name: 'leader-elect', value: 'BOOL', help: 'leader election', default: 'true' },
  {
    name: 'leader-elect-lease-duration',
    value: 'DURATION',
    help: 'how long a leader’s Lease lasts: a crashed leader is replaced within it and a retry period',
    default: formatDuration(LEADER_ELECTION_DEFAULTS.leaseDurationMs),
  },
  {
    name: 'leader-elect-renew-deadline',
    value: 'DURATION',
    help: 'how long the leader tries to renew before it steps down',
    default: formatDuration(LEADER_ELECTION_DEFAULTS.renewDeadlineMs),
  },
  {
    name: 'leader-elect-retry-period',
    value: 'DURATION',
    help: 'how often a standby tries to take the Lease',
    default: formatDuration(LEADER_ELECTION_DEFAULTS.retryPeriodMs),
  },
  HTTP_PORT_FLAG,
  LOG_LEVEL_FLAG,
  {
    name: 'otlp-endpoint',
    value: 'URL',
    help: 'send a trace span per reconcile to this OTLP/HTTP collector (http://collector:4318)',
    default: 'tracing off',
  },
  TRACE_SAMPLE_RATIO_FLAG,
];

/** A controller's usage text: its own flags, then those every controller takes. */
export function controllerUsage(controller: string, own: readonly Flag[]): string {
  return `usage: ${controller} [options]\n${usageOf([...own, ...CONTROLLER_FLAGS])}`;
}

/** The command line of a controller: the common flags read, its own flags as text for its schema. */
interface ControllerFlags {
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
function readControllerFlags(controller: string, argv: string[], own: readonly Flag[]): ControllerFlags {
  const values = readFlags(argv, [...CONTROLLER_FLAGS, ...own]);
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
          namespace: secretNamespace ?? DEFAULT_SECRET_NAMESPACE,
          name: `cellfed-${controller}-${values.cellset ?? DEFAULT_CELLSET_NAME}`,
          leaseDurationMs: ms('leader-elect-lease-duration') ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs,
          renewDeadlineMs: ms('leader-elect-renew-deadline') ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs,
          retryPeriodMs: ms('leader-elect-retry-period') ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs,
        },
      },
      tracing: {
        otlpEndpoint: values['otlp-endpoint'],
        sampleRatio: number(values['trace-sample-ratio']),
      },
    },
  };
}

/**
 * A controller's command line read into its config: the flags every controller takes and its own `group`,
 * checked by `schema` (its `ControllerConfigSchema.extend(group.shape)`). Throws a ControllerKitError
 * (InvalidConfig) with every problem in one line.
 */
export function readControllerConfig<S extends z.ZodType>(
  controller: string,
  argv: string[],
  group: {
    readonly flags: readonly Flag[];
    input(values: Readonly<Record<string, string | undefined>>): Record<string, string | undefined>;
  },
  schema: S,
): z.output<S> {
  const { values, common } = readControllerFlags(controller, argv, group.flags);
  const result = schema.safeParse({ ...common, ...group.input(values) });
  if (result.success) return result.data;
  throw invalid(issuesLine(result.error));
}

const invalid = (message: string, cause?: unknown) =>
  new ControllerKitError(ControllerKitErrorCode.InvalidConfig, message, cause ? { cause } : undefined);

/**
 * The settings every controller has, from the flags every controller takes; a controller's own schema
 * extends it (`ControllerConfigSchema.extend({...}).strict()`).
 */
export const ControllerConfigSchema = z.object({
  /** The control plane kubeconfig; the in-cluster service account when absent. */
  kubeconfig: z.string().min(1).optional(),
  cellSetName: z.string().min(1).default(DEFAULT_CELLSET_NAME),
  secretNamespace: z.string().min(1).default(DEFAULT_SECRET_NAMESPACE),
  manager: ManagerConfigSchema,
  tracing: TracingConfigSchema,
});

/** Every issue of a failed parse, in one line: `path: problem; …`. */
export function issuesLine(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`).join('; ');
}
