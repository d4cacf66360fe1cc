import { hostname } from 'node:os';

import {
  ManagerConfigSchema,
  TracingConfigSchema,
  cellSetFlag,
  cellUserFlag,
  flagGroup,
  intFlag,
  issuesLine,
  kubeconfigFlag,
  processFlagRows,
  processSettings,
  readFlags,
  secretNamespaceFlag,
  credentialsNamespaceFlag,
  textFlag,
  usageOf,
  type Flag,
} from '@cellfed/controller-kit';
import { z } from 'zod';
import { RouterError, RouterErrorCode } from './errors.ts';

/** The router's own flags, each declared once: usage, parsing, default and the README table. */
const OWN = flagGroup({
  tlsCertFile: textFlag('tls-cert-file', { value: 'FILE', help: 'serving certificate' }),
  tlsKeyFile: textFlag('tls-key-file', { value: 'FILE', help: 'its key' }),
  /** `namespace/name` of a kubernetes.io/tls Secret in the control plane, instead of the files. */
  tlsSecret: textFlag('tls-secret', {
    value: 'NS/NAME',
    help: 'or the serving certificate from a kubernetes.io/tls Secret in the control plane, re-read every minute: a renewed certificate is served without a restart',
    pattern: /^[a-z0-9-]+\/[a-z0-9.-]+$/,
    message: '--tls-secret must be NAMESPACE/NAME',
  }),
  /** CA of client certificates; bearer tokens are checked by TokenReview either way. */
  clientCaFile: textFlag('client-ca-file', {
    value: 'FILE',
    help: 'CA of accepted client certificates; bearer tokens are checked by TokenReview either way',
  }),
  /** The control plane kubeconfig; the in-cluster service account when absent. */
  kubeconfig: kubeconfigFlag('control plane kubeconfig; its identity must be allowed to impersonate'),
  host: textFlag('host', { value: 'HOST', help: 'address of the Kubernetes API front', default: '0.0.0.0' }),
  port: intFlag('port', { help: 'its port; 0 picks one', default: 6443, min: 0, max: 65535 }),
  cellSetName: cellSetFlag('the CellSet it routes by'),
  secretNamespace: secretNamespaceFlag(
    "where the routers' Leases are, and the cells' kubeconfig Secrets without --credentials-namespace",
  ),
  credentialsNamespace: credentialsNamespaceFlag(),
  /** Names the cells' own policies exempt: the router serves no caller by them (docs/security.md). */
  routerCellUser: cellUserFlag(
    'router',
    'the user name this router calls the cells as, where each component has an identity of its own there; the cells exempt it from the reserved-marks policy and the mirrored admission policies, so a caller by that name, or impersonating it, is refused (403)',
    'none',
  ),
  rebalanceControllerCellUser: cellUserFlag(
    'rebalance-controller',
    'the user name the rebalance controller calls the cells as; refused as a caller as --router-cell-user is',
    'none',
  ),
  backupControllerCellUser: cellUserFlag(
    'backup-controller',
    'the user name the backup controller calls the cells as; refused as a caller as --router-cell-user is',
    'none',
  ),
  /** This replica's name in its Lease; the pod name in a cluster. */
  replicaId: textFlag('replica-id', {
    value: 'ID',
    help: 'this replica’s name in its Lease; the pod name in a cluster',
    default: `${hostname()}-${process.pid}`,
    defaultText: 'host name and process id',
  }),
  /** What one caller may hold open at once; past it, 429 with Retry-After. */
  maxRequestsInFlightPerCaller: intFlag('max-requests-in-flight-per-caller', {
    help: 'requests one caller (its user name, and a ServiceAccount’s namespace) may have in flight at once, watches aside; past it a 429 with Retry-After',
    default: 400,
    max: Number.MAX_SAFE_INTEGER,
  }),
  maxLongRunningPerCaller: intFlag('max-long-running-per-caller', {
    help: 'watches, followed logs, exec and port-forward sessions one caller (its user name, and a ServiceAccount’s namespace) may have open at once; past it a 429',
    default: 250,
    max: Number.MAX_SAFE_INTEGER,
  }),
  maxLongRunning: intFlag('max-long-running', {
    help: 'watches, followed logs, exec and port-forward sessions open at once for all callers together, the bound on what they hold: a watch costs about 0.3 MB per cell it reads (a connection to each); past it a 429',
    default: 1000,
    max: Number.MAX_SAFE_INTEGER,
  }),
  /** What the router holds of request bodies it reads whole; past it, 429 with Retry-After. */
  maxBodyBytesInFlight: intFlag('max-body-bytes-in-flight', {
    help: 'bytes of request bodies the router holds at once, for all callers: the bound on their memory; past it a 429',
    default: 256 * 1024 * 1024,
    min: 3 * 1024 * 1024,
    max: Number.MAX_SAFE_INTEGER,
  }),
  maxConnections: intFlag('max-connections', {
    help: 'client connections open at once, for all callers; past it a connection is closed at once (an HTTP/2 connection with no stream open for 90 s is closed too)',
    default: 20_000,
    max: Number.MAX_SAFE_INTEGER,
  }),
  maxWatchBytesHeld: intFlag('max-watch-bytes-held', {
    help: 'bytes of cells’ events all watches together hold for clients that read slower than the cells send (8 MiB for one watch); past it watches stop reading their cells, and a live watch whose client takes nothing for 10 s is ended (the client resumes)',
    default: 256 * 1024 * 1024,
    min: 8 * 1024 * 1024,
    max: Number.MAX_SAFE_INTEGER,
  }),
  maxBodyBytesPerCaller: intFlag('max-body-bytes-per-caller', {
    help: 'bytes of request bodies one caller (its user name, and a ServiceAccount’s namespace) may have held at once; past it a 429',
    default: 32 * 1024 * 1024,
    min: 3 * 1024 * 1024,
    max: Number.MAX_SAFE_INTEGER,
  }),
});

/** The flags of the health port, the log and the traces, which the router shares with the controllers. */
const PROCESS = flagGroup(
  processFlagRows(
    'send a server span per request, named as kube-apiserver names its own (get deployments), to this OTLP/HTTP collector (http://collector:4318); the cells get its traceparent',
  ),
);

/** Everything the router process is configured with; parsed once, in main.ts. */
const RouterConfigSchema = z
  .object({
    ...OWN.shape,
    /** /metrics, /healthz and /readyz (plain HTTP, for probes and Prometheus). */
    manager: ManagerConfigSchema,
    /** A span per request to an OTLP collector; off unless an endpoint is given. */
    tracing: TracingConfigSchema,
  })
  .strict()
  .refine(
    (config) =>
      config.tlsSecret ? !config.tlsCertFile && !config.tlsKeyFile : config.tlsCertFile && config.tlsKeyFile,
    {
      error: 'give --tls-cert-file and --tls-key-file, or --tls-secret',
      path: ['tls'],
    },
  );

export type RouterConfig = z.output<typeof RouterConfigSchema>;

/** The router's flags, in the order of its usage and README table. */
export const ROUTER_FLAGS: readonly Flag[] = [...OWN.flags, ...PROCESS.flags];

export const USAGE = `usage: cell-router (--tls-cert-file FILE --tls-key-file FILE | --tls-secret NS/NAME) [options]
${usageOf(ROUTER_FLAGS)}`;

/** Reads the command line into the config; every problem in one line. */
export function parseRouterArgs(argv: string[]): RouterConfig {
  let values: Record<string, string | undefined>;
  try {
    values = readFlags(argv, ROUTER_FLAGS);
  } catch (error) {
    throw new RouterError(RouterErrorCode.InvalidConfig, (error as Error).message, { cause: error });
  }
  const process = z.object(PROCESS.shape).safeParse(PROCESS.input(values));
  // The router's own settings are checked even when a process flag is bad: every problem in the one line.
  const result = RouterConfigSchema.safeParse({
    ...OWN.input(values),
    ...(process.success
      ? processSettings(process.data, { enabled: false })
      : { manager: { leaderElection: { enabled: false } } }),
  });
  if (result.success && process.success) return result.data;
  const issues = [...(process.error?.issues ?? []), ...(result.error?.issues ?? [])];
  throw new RouterError(RouterErrorCode.InvalidConfig, issuesLine(new z.ZodError(issues)));
}
