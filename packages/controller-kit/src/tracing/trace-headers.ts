import {
  ROOT_CONTEXT,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

// W3C trace context (`traceparent`, `tracestate`) is what kube-apiserver reads; used directly, without a
// global propagator or context manager, so nothing in the process depends on global state.
const propagator = new W3CTraceContextPropagator();

/** The parent a caller's headers name, or the root context when they name none (or a malformed one). */
export function parentContextOf(headers: Readonly<Record<string, string | string[] | undefined>>): Context {
  return propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
}

/**
 * The headers that make `span` the parent of a request sent on: `traceparent` (and `tracestate`), or none
 * for a span that carries no context (tracing off).
 */
export function traceHeadersOf(span: Span): Record<string, string> {
  const headers: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
  return headers;
}
