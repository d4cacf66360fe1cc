import { createServer, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

import type { CollectedSpan } from './otlp-collector.ts';

/** A protobuf message's fields by number: varints as bigints, everything else as its bytes. */
type Fields = Map<number, (Buffer | bigint)[]>;

function fieldsOf(bytes: Buffer): Fields {
  const fields: Fields = new Map();
  let at = 0;
  const varint = () => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < bytes.length) {
    const key = varint();
    const wireType = Number(key & 7n);
    let value: Buffer | bigint;
    if (wireType === 0) value = varint();
    else {
      const length = wireType === 2 ? Number(varint()) : wireType === 1 ? 8 : 4;
      value = bytes.subarray(at, at + length);
      at += length;
    }
    const number = Number(key >> 3n);
    fields.set(number, [...(fields.get(number) ?? []), value]);
  }
  return fields;
}

const messages = (fields: Fields, number: number) =>
  (fields.get(number) ?? []).map((value) => fieldsOf(value as Buffer));
const bytesOf = (fields: Fields, number: number) =>
  (fields.get(number)?.[0] as Buffer | undefined) ?? Buffer.alloc(0);

/** KeyValue attributes (common.proto): strings, booleans and integers are what apiservers send. */
function attributesOf(keyValues: Fields[]): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const keyValue of keyValues) {
    const value = messages(keyValue, 2)[0];
    if (!value) continue;
    const key = bytesOf(keyValue, 1).toString('utf8');
    if (value.has(1)) attributes[key] = bytesOf(value, 1).toString('utf8');
    else if (value.has(2)) attributes[key] = value.get(2)![0] === 1n;
    else if (value.has(3)) attributes[key] = Number(value.get(3)![0]);
  }
  return attributes;
}

/** The spans of one ExportTraceServiceRequest (trace_service.proto, trace.proto). */
function spansOf(request: Buffer): CollectedSpan[] {
  const spans: CollectedSpan[] = [];
  for (const resourceSpans of messages(fieldsOf(request), 1)) {
    const resource = messages(resourceSpans, 1)[0];
    const service = String(attributesOf(resource ? messages(resource, 1) : [])['service.name']);
    for (const scopeSpans of messages(resourceSpans, 2))
      for (const span of messages(scopeSpans, 2))
        spans.push({
          service,
          name: bytesOf(span, 5).toString('utf8'),
          traceId: bytesOf(span, 1).toString('hex'),
          spanId: bytesOf(span, 2).toString('hex'),
          parentSpanId: bytesOf(span, 4).toString('hex'),
          attributes: attributesOf(messages(span, 9)),
        });
  }
  return spans;
}

/** Answers an Export call: an empty ExportTraceServiceResponse, then grpc-status 0 as a trailer. */
function answer(stream: ServerHttp2Stream): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(Buffer.alloc(5));
}

/**
 * An OTLP/gRPC collector on loopback (cleartext HTTP/2, as kube-apiserver's exporter connects): what a cell
 * apiserver exports when started with a tracing configuration.
 */
export async function startOtlpGrpcCollector() {
  const spans: CollectedSpan[] = [];
  const server = createServer();
  // The exporter keeps its connection: closing the collector ends it.
  const sessions = new Set<Http2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      if (headers[':path'] === '/opentelemetry.proto.collector.trace.v1.TraceService/Export') {
        // Length-prefixed gRPC messages: a compressed flag, a 4-byte length, the message.
        const body = Buffer.concat(chunks);
        for (let at = 0; at + 5 <= body.length;) {
          const length = body.readUInt32BE(at + 1);
          const message = body.subarray(at + 5, at + 5 + length);
          spans.push(...spansOf(body[at] === 1 ? gunzipSync(message) : message));
          at += 5 + length;
        }
      }
      answer(stream);
    });
    stream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** host:port, as a tracing configuration's `endpoint` takes it. */
    endpoint: `127.0.0.1:${port}`,
    spans,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}
