import { DEFAULT_CELLSET_NAME, DEFAULT_SECRET_NAMESPACE } from '@cellfed/api';
import { z } from 'zod';

import { ControllerKitError, ControllerKitErrorCode } from '../errors.ts';
import { LOG_LEVELS, ManagerConfigSchema } from './manager-config.ts';
import { formatDuration } from './duration.ts';
import {
  boolFlag,
  durationFlag,
  flagGroup,
  intFlag,
  ratioFlag,
  textFlag,
  type FlagGroup,
  type FlagRow,
  type FlagSettings,
} from './flag-rows.ts';
import { readFlags, usageOf, type Flag } from './flags.ts';
import { LEADER_ELECTION_DEFAULTS } from '../leader/leader-elector.ts';
import { TracingConfigSchema } from '../tracing/tracing.ts';

/** `--kubeconfig`: the control plane's; `help` says what the binary does with it. */
export const kubeconfigFlag = (help: string) =>
  textFlag('kubeconfig', { value: 'FILE', help, defaultText: 'the in-cluster service account' });

/** `--cellset`: the CellSet the binary works for. */
export const cellSetFlag = (help: string) =>
  textFlag('cellset', { value: 'NAME', help, default: DEFAULT_CELLSET_NAME });

/** `--secret-namespace`: where the cells' kubeconfig Secrets are, and the Leases the binary uses. */
export const secretNamespaceFlag = (help: string) =>
  textFlag('secret-namespace', { value: 'NS', help, default: DEFAULT_SECRET_NAMESPACE });

/**
 * `--credentials-namespace`: where this component's own kubeconfig Secrets of the cells are (a cell whose
 * Secret reference names no namespace), so each component calls the cells as an identity of its own and
 * reads no other component's credentials. Unset: `--secret-namespace`.
 */
export const credentialsNamespaceFlag = () =>
  textFlag('credentials-namespace', {
    value: 'NS',
    help: "where this component's kubeconfig Secrets of the cells are (a cell's Secret reference without a namespace)",
    defaultText: 'the --secret-namespace',
    pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    message: '--credentials-namespace must be a namespace name',
  });

/** A user name a component calls the cells as: no control character, no space at either end. */
// eslint-disable-next-line no-control-regex
const CELL_USER = /^[^\s\u0000-\u001f][^\u0000-\u001f]*(?<!\s)$/;

/**
 * `--<component>-cell-user`: the user name `component` calls the cells as, where it has an identity of its
 * own there (the chart's `<component>.cellUser`). The cells' reserved-marks and mirrored admission policies
 * exempt these names (the rebalance controller writes them there), so the router serves no caller by them.
 */
export const cellUserFlag = (component: string, help: string, defaultText: string) =>
  textFlag(`${component}-cell-user`, {
    value: 'USER',
    help,
    defaultText,
    pattern: CELL_USER,
    message: `--${component}-cell-user must be a user name (no control character, no space at either end)`,
  });

/**
 * The flags of a process's health port, log and traces, which the router and every controller take;
 * `otlpHelp` says what a span is for the binary.
 */
export function processFlagRows(otlpHelp: string) {
  return {
    httpPort: intFlag('http-port', {
      help: '/metrics, /healthz, /readyz; 0 picks one',
      default: 8080,
      min: 0,
      max: 65535,
    }),
    logLevel: textFlag('log-level', {
      value: 'LEVEL',
      help: 'pino level',
      default: 'info',
      pattern: new RegExp(`^(?:${LOG_LEVELS.join('|')})$`),
      message: `--log-level must be one of ${LOG_LEVELS.join(', ')}`,
    }),
    otlpEndpoint: textFlag('otlp-endpoint', { value: 'URL', help: otlpHelp, defaultText: 'tracing off' }),
    traceSampleRatio: ratioFlag('trace-sample-ratio', {
      help: 'share of new traces recorded, 0 to 1; a caller’s sampled trace is always followed',
      default: 1,
    }),
  };
}

/** What {@link processFlagRows} read. */
export interface ProcessFlagSettings {
  readonly httpPort: number;
  readonly logLevel: string;
  readonly otlpEndpoint: string | undefined;
  readonly traceSampleRatio: number;
}

/** The input of the manager's and the tracer's schemas from the process flags (see ManagerConfigSchema). */
export function processSettings(
  flags: ProcessFlagSettings,
  leaderElection: Record<string, unknown>,
): { manager: Record<string, unknown>; tracing: Record<string, unknown> } {
  return {
    manager: { httpPort: flags.httpPort, logLevel: flags.logLevel, leaderElection },
    tracing: {
      ...(flags.otlpEndpoint === undefined ? {} : { otlpEndpoint: flags.otlpEndpoint }),
      sampleRatio: flags.traceSampleRatio,
    },
  };
}

/** The flags every cellfed controller takes, after its own: each declared once, here. */
const COMMON = flagGroup({
  kubeconfig: kubeconfigFlag('control plane kubeconfig'),
  cellSetName: cellSetFlag('the CellSet'),
  secretNamespace: secretNamespaceFlag(
    "where the routers' Leases and the leader Lease are, and the cells' kubeconfig Secrets without --credentials-namespace",
  ),
  credentialsNamespace: credentialsNamespaceFlag(),
  leaderElect: boolFlag('leader-elect', { help: 'leader election', default: true }),
  leaseDurationMs: durationFlag('leader-elect-lease-duration', {
    help: 'how long a leader’s Lease lasts: a crashed leader is replaced within it and a retry period',
    default: formatDuration(LEADER_ELECTION_DEFAULTS.leaseDurationMs),
  }),
  renewDeadlineMs: durationFlag('leader-elect-renew-deadline', {
    help: 'how long the leader tries to renew before it steps down',
    default: formatDuration(LEADER_ELECTION_DEFAULTS.renewDeadlineMs),
  }),
  retryPeriodMs: durationFlag('leader-elect-retry-period', {
    help: 'how often a standby tries to take the Lease',
    default: formatDuration(LEADER_ELECTION_DEFAULTS.retryPeriodMs),
  }),
  ...processFlagRows('send a trace span per reconcile to this OTLP/HTTP collector (http://collector:4318)'),
});

/** The flags every cellfed controller takes, after its own. */
export const CONTROLLER_FLAGS: readonly Flag[] = COMMON.flags;

/** A controller's usage text: its own flags, then those every controller takes. */
export function controllerUsage(controller: string, own: readonly Flag[]): string {
  return `usage: ${controller} [options]\n${usageOf([...own, ...CONTROLLER_FLAGS])}`;
}

/**
 * A controller's command line read into its config: the flags every controller takes and its own `group`.
 * Throws a ControllerKitError (InvalidConfig) with every problem in one line: an unknown flag, a missing
 * value, a value its row cannot read, or settings that do not fit together (the leader election's
 * durations). The leader Lease is `cellfed-<controller>-<cellset>`.
 */
export function readControllerConfig<G extends FlagGroup<Record<string, FlagRow<unknown>>>>(
  controller: string,
  argv: string[],
  group: G,
): ControllerConfig & FlagSettings<G> {
  const values = readFlags(argv, [...CONTROLLER_FLAGS, ...group.flags]);
  const common = z.object(COMMON.shape).safeParse(COMMON.input(values));
  const own = z.object(group.shape).safeParse(group.input(values));
  const issues = [...(common.error?.issues ?? []), ...(own.error?.issues ?? [])];
  if (!common.success || !own.success) throw invalid(issuesLine(new z.ZodError(issues)));
  const flags = common.data;
  const config = ControllerConfigSchema.safeParse({
    ...(flags.kubeconfig === undefined ? {} : { kubeconfig: flags.kubeconfig }),
    cellSetName: flags.cellSetName,
    secretNamespace: flags.secretNamespace,
    credentialsNamespace: flags.credentialsNamespace ?? flags.secretNamespace,
    ...processSettings(flags, {
      enabled: flags.leaderElect,
      namespace: flags.secretNamespace,
      name: `cellfed-${controller}-${flags.cellSetName}`,
      leaseDurationMs: flags.leaseDurationMs,
      renewDeadlineMs: flags.renewDeadlineMs,
      retryPeriodMs: flags.retryPeriodMs,
    }),
  });
  if (!config.success) throw invalid(issuesLine(config.error));
  return { ...config.data, ...(own.data as FlagSettings<G>) };
}

const invalid = (message: string) => new ControllerKitError(ControllerKitErrorCode.InvalidConfig, message);

/** The settings every controller has, from the flags every controller takes. */
const ControllerConfigSchema = z.object({
  /** The control plane kubeconfig; the in-cluster service account when absent. */
  kubeconfig: z.string().min(1).optional(),
  cellSetName: z.string().min(1).default(DEFAULT_CELLSET_NAME),
  secretNamespace: z.string().min(1).default(DEFAULT_SECRET_NAMESPACE),
  /** Where this component's kubeconfig Secrets of the cells are: `secretNamespace` unless given. */
  credentialsNamespace: z.string().min(1).default(DEFAULT_SECRET_NAMESPACE),
  manager: ManagerConfigSchema,
  tracing: TracingConfigSchema,
});

export type ControllerConfig = z.output<typeof ControllerConfigSchema>;

/** Every issue of a failed parse, in one line: `path: problem; …`. */
export function issuesLine(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`).join('; ');
}
