import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

import { TracingConfigSchema, createTracing } from './tracing.ts';
import { parentContextOf, traceHeadersOf } from './trace-headers.ts';

/** An OTLP/HTTP collector stand-in: keeps what is posted to it. */
async function collector() {
  const received: { path: string; contentType: string; body: string }[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        path: request.url ?? '',
        contentType: request.headers['content-type'] ?? '',
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('createTracing', () => {
  it('is off without an endpoint: spans record nothing and propagate nothing', async () => {
    const tracing = createTracing({ serviceName: 'router', config: TracingConfigSchema.parse({}) });
    expect(tracing.enabled).toBe(false);
    const span = tracing.tracer.startSpan('get deployments');
    expect(span.isRecording()).toBe(false);
    expect(traceHeadersOf(span)).toEqual({});
    span.end();
    await tracing.shutdown();
  });

  it('exports ended spans over OTLP/HTTP to <endpoint>/v1/traces with the service name', async () => {
    const otlp = await collector();
    try {
      const tracing = createTracing({
        serviceName: 'cell-router',
        serviceInstance: 'router-0',
        config: TracingConfigSchema.parse({ otlpEndpoint: `${otlp.url}/` }),
      });
      expect(tracing.enabled).toBe(true);
      const span = tracing.tracer.startSpan('get deployments', { attributes: { 'cellfed.cell': 'cell-2' } });
      const traceId = span.spanContext().traceId;
      span.end();
      await tracing.shutdown();
      expect(otlp.received).toHaveLength(1);
      const [post] = otlp.received;
      expect(post!.path).toBe('/v1/traces');
      expect(post!.body).toContain('get deployments');
      expect(post!.body).toContain('cell-2');
      expect(post!.body).toContain('cell-router');
      expect(post!.body).toContain('router-0');
      expect(post!.contentType).toBe('application/json');
      expect(post!.body).toContain(traceId);
    } finally {
      await otlp.close();
    }
  });

  it('samples new traces by the ratio, and always follows a sampled parent', () => {
    const none = createTracing({
      serviceName: 'x',
      config: TracingConfigSchema.parse({ otlpEndpoint: 'http://127.0.0.1:1', sampleRatio: 0 }),
    });
    expect(none.tracer.startSpan('root').isRecording()).toBe(false);
    const sampledCaller = parentContextOf({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    });
    expect(none.tracer.startSpan('child', {}, sampledCaller).isRecording()).toBe(true);
    void none.shutdown();
  });

  it('refuses a malformed endpoint or ratio with the flag named', () => {
    expect(() => TracingConfigSchema.parse({ otlpEndpoint: 'collector:4318' })).toThrow(/--otlp-endpoint/);
    expect(() => TracingConfigSchema.parse({ sampleRatio: 2 })).toThrow(/--trace-sample-ratio/);
  });
});
