import { trace } from '@opentelemetry/api';

import { recordingTracer } from '../testing/recording-tracer.ts';
import { parentContextOf, traceHeadersOf } from './trace-headers.ts';

describe('trace headers', () => {
  const { tracer } = recordingTracer();

  it('gives the traceparent of a span, so the next hop is its child', () => {
    const span = tracer.startSpan('request');
    const { traceId, spanId } = span.spanContext();
    expect(traceHeadersOf(span)).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
  });

  it("continues a caller's trace: a span started in its context has the caller's trace and parent", () => {
    const caller = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const span = tracer.startSpan('request', {}, parentContextOf({ traceparent: caller }));
    expect(span.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(span.spanContext().spanId).not.toBe('00f067aa0ba902b7');
    expect(traceHeadersOf(span).traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
  });

  it('starts a new trace when the caller names none or a malformed one', () => {
    for (const headers of [{}, { traceparent: 'not-a-trace' }, { traceparent: ['a', 'b'] }]) {
      const parent = trace.getSpanContext(parentContextOf(headers));
      expect(parent).toBeUndefined();
    }
  });
});
