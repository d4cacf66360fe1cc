import { hostname } from 'node:os';
import { parseArgs } from 'node:util';

import { ManagerConfigSchema, TracingConfigSchema } from '@cellfed/controller-kit';
import { DEFAULT_CELLSET_NAME, DEFAULT_SECRET_NAMESPACE } from '@cellfed/hashing';
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

export const USAGE = `usage: cell-router (--tls-cert-file FILE --tls-key-file FILE | --tls-secret NS/NAME) [options]
  --kubeconfig FILE        control plane kubeconfig (default: in-cluster service account)
  --host HOST              address of the Kubernetes API front (default 0.0.0.0)
  --port N                 its port (default 6443; 0 picks one)
  --tls-secret NS/NAME     serving certificate from a kubernetes.io/tls Secret in the control plane
                           (re-read every minute: a renewed certificate is served without a restart)
  --client-ca-file FILE    CA of accepted client certificates
  --cellset NAME           the CellSet (default default)
  --secret-namespace NS    where the cells' kubeconfig Secrets and the routers' Leases are (default cellfed-system)
  --replica-id ID          this replica's name in its Lease (default: host name and process id)
  --http-port N            /metrics, /healthz, /readyz (default 8080; 0 picks one)
  --log-level LEVEL        pino level (default info)
  --otlp-endpoint URL      send a trace span per request to this OTLP/HTTP collector (http://collector:4318);
                           the cells get its traceparent (default: tracing off)
  --trace-sample-ratio R   share of new traces recorded, 0 to 1; a sampled caller's trace is always
                           followed (default 1)`;

/** Reads the command line into the config; every problem in one line. */
export function parseRouterArgs(argv: string[]): RouterConfig {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      kubeconfig: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'tls-cert-file': { type: 'string' },
      'tls-key-file': { type: 'string' },
      'tls-secret': { type: 'string' },
      'client-ca-file': { type: 'string' },
      cellset: { type: 'string' },
      'secret-namespace': { type: 'string' },
      'replica-id': { type: 'string' },
      'http-port': { type: 'string' },
      'log-level': { type: 'string' },
      'otlp-endpoint': { type: 'string' },
      'trace-sample-ratio': { type: 'string' },
    },
  });
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
  throw new RouterError(
    RouterErrorCode.InvalidConfig,
    result.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`).join('; '),
  );
}
