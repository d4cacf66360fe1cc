import { DEFAULT_CELLSET_NAME, DEFAULT_SECRET_NAMESPACE } from '@cellfed/api';
import { hostname } from 'node:os';

import {
  CELLSET_FLAG,
  HTTP_PORT_FLAG,
  KUBECONFIG_FLAG,
  LOG_LEVEL_FLAG,
  ManagerConfigSchema,
  TRACE_SAMPLE_RATIO_FLAG,
  TracingConfigSchema,
  issuesLine,
  readFlags,
  usageOf,
  type Flag,
} from '@cellfed/controller-kit';
import { z } from 'zod';
import { RouterError, RouterErrorCode } from './errors.ts';

/** Everything the router process is configured with; parsed once, in main.ts. */
export const RouterConfigSchema = z
  .object({
    /** The control plane kubeconfig; the in-cluster service account when absent. */
    kubeconfig: z.string().min(1).optional(),
    host: z.string().min(1).default('0.0.0.0'),
    port: z.number({ error: 'must be a number from 0 to 65535' }).int().min(0).max(65535).default(6443),
    tlsCertFile: z.string().min(1).optional(),
    tlsKeyFile: z.string().min(1).optional(),
    /** `namespace/name` of a kubernetes.io/tls Secret in the control plane, instead of the files. */
    tlsSecret: z
      .string()
      .regex(/^[a-z0-9-]+\/[a-z0-9.-]+$/, { error: '--tls-secret must be NAMESPACE/NAME' })
      .optional(),
    /** CA of client certificates; bearer tokens are checked by TokenReview either way. */
    clientCaFile: z.string().min(1).optional(),
    cellSetName: z.string().min(1).default(DEFAULT_CELLSET_NAME),
    secretNamespace: z.string().min(1).default(DEFAULT_SECRET_NAMESPACE),
    /** What one caller may hold open at once; past it, 429 with Retry-After. */
    maxRequestsInFlightPerCaller: z
      .number({ error: 'must be a whole number of requests' })
      .int()
      .min(1)
      .default(400),
    maxLongRunningPerCaller: z
      .number({ error: 'must be a whole number of requests' })
      .int()
      .min(1)
      .default(1000),
    /** This replica's name in its Lease; the pod name in a cluster. */
    replicaId: z.string().min(1).default(`${hostname()}-${process.pid}`),
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

/** The router's flags, declared once (usage, parsing and the README table). */
export const ROUTER_FLAGS: readonly Flag[] = [
  { name: 'tls-cert-file', value: 'FILE', help: 'serving certificate' },
  { name: 'tls-key-file', value: 'FILE', help: 'its key' },
  {
    name: 'tls-secret',
    value: 'NS/NAME',
    help: 'or the serving certificate from a kubernetes.io/tls Secret in the control plane, re-read every minute: a renewed certificate is served without a restart',
  },
  {
    name: 'client-ca-file',
    value: 'FILE',
    help: 'CA of accepted client certificates; bearer tokens are checked by TokenReview either way',
  },
  {
    ...KUBECONFIG_FLAG,
    help: 'control plane kubeconfig; its identity must be allowed to impersonate',
  },
  { name: 'host', value: 'HOST', help: 'address of the Kubernetes API front', default: '0.0.0.0' },
  { name: 'port', value: 'N', help: 'its port; 0 picks one', default: '6443' },
  { ...CELLSET_FLAG, help: 'the CellSet it routes by' },
  {
    name: 'secret-namespace',
    value: 'NS',
    help: "where the cells' kubeconfig Secrets and the routers' Leases are",
    default: DEFAULT_SECRET_NAMESPACE,
  },
  {
    name: 'replica-id',
    value: 'ID',
    help: 'this replica’s name in its Lease; the pod name in a cluster',
    default: 'host name and process id',
  },
  {
    name: 'max-requests-in-flight-per-caller',
    value: 'N',
    help: 'requests one caller (by user name) may have in flight at once, watches aside; past it a 429 with Retry-After',
    default: '400',
  },
  {
    name: 'max-long-running-per-caller',
    value: 'N',
    help: 'watches, followed logs, exec and port-forward sessions one caller may have open at once; past it a 429',
    default: '1000',
  },
  HTTP_PORT_FLAG,
  LOG_LEVEL_FLAG,
  {
    name: 'otlp-endpoint',
    value: 'URL',
    help: 'send a server span per request, named as kube-apiserver names its own (get deployments), to this OTLP/HTTP collector (http://collector:4318); the cells get its traceparent',
    default: 'tracing off',
  },
  TRACE_SAMPLE_RATIO_FLAG,
];

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
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  const result = RouterConfigSchema.safeParse({
    kubeconfig: values.kubeconfig,
    host: values.host,
    port: number(values.port),
    tlsCertFile: values['tls-cert-file'],
    tlsKeyFile: values['tls-key-file'],
    tlsSecret: values['tls-secret'],
    clientCaFile: values['client-ca-file'],
    cellSetName: values.cellset,
    secretNamespace: values['secret-namespace'],
    replicaId: values['replica-id'],
    maxRequestsInFlightPerCaller: number(values['max-requests-in-flight-per-caller']),
    maxLongRunningPerCaller: number(values['max-long-running-per-caller']),
    manager: {
      httpPort: number(values['http-port']),
      logLevel: values['log-level'],
      leaderElection: { enabled: false },
    },
    tracing: {
      otlpEndpoint: values['otlp-endpoint'],
      sampleRatio: number(values['trace-sample-ratio']),
    },
  });
  if (result.success) return result.data;
  throw new RouterError(RouterErrorCode.InvalidConfig, issuesLine(result.error));
}
