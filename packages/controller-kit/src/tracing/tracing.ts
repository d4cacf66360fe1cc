import { ProxyTracerProvider, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { z } from 'zod';

/** Where spans go, if anywhere; off unless an OTLP endpoint is given. */
export const TracingConfigSchema = z
  .object({
    /** An OTLP/HTTP collector's base URL (`http://otel-collector:4318`); spans go to `<it>/v1/traces`. */
    otlpEndpoint: z
      .url({
        protocol: /^https?$/,
        error: '--otlp-endpoint must be an http(s) URL such as http://collector:4318',
      })
      .optional(),
    /** The share of new traces recorded; a request that arrives inside a sampled trace is always recorded. */
    sampleRatio: z
      .number({ error: '--trace-sample-ratio must be a number from 0 to 1' })
      .min(0, { error: '--trace-sample-ratio must be a number from 0 to 1' })
      .max(1, { error: '--trace-sample-ratio must be a number from 0 to 1' })
      .default(1),
  })
  .strict()
  .default({ sampleRatio: 1 });

export type TracingConfig = z.output<typeof TracingConfigSchema>;

/** A process's tracer and how to flush what it has not sent yet. */
export interface Tracing {
  readonly tracer: Tracer;
  /** True when spans are exported. */
  readonly enabled: boolean;
  /** Sends what is buffered and stops; a collector that does not answer delays this by at most its timeout. */
  shutdown(): Promise<void>;
}

/**
 * A tracer that records nothing: what every component gets when tracing is off. Spans from it are
 * non-recording and carry no context, so nothing is propagated either.
 */
export const NOOP_TRACER: Tracer = new ProxyTracerProvider().getTracer('cellfed');

/**
 * The tracer of one process, from its config. The provider is not registered globally: it is handed to the
 * components that make spans, as the prom-client Registry is.
 */
export function createTracing(options: {
  serviceName: string;
  /** This replica (pod name, or host and pid). */
  serviceInstance?: string;
  config: TracingConfig;
}): Tracing {
  const { otlpEndpoint, sampleRatio } = options.config;
  if (!otlpEndpoint) return { tracer: NOOP_TRACER, enabled: false, shutdown: () => Promise.resolve() };
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': options.serviceName,
      'service.namespace': 'cellfed',
      ...(options.serviceInstance ? { 'service.instance.id': options.serviceInstance } : {}),
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(sampleRatio) }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: `${otlpEndpoint.replace(/\/+$/, '')}/v1/traces` }),
      }),
    ],
  });
  return {
    tracer: provider.getTracer(`cellfed-${options.serviceName}`),
    enabled: true,
    shutdown: () => provider.shutdown(),
  };
}
