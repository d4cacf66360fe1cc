import type { Service, ServiceSpec } from '@cellfed/federation';

import { openEnvelope } from './kube-protobuf.ts';
import {
  fieldSpans,
  int32At,
  lengthDelimited,
  stringField,
  varintAt,
  varintField,
  type AnyFieldSpan,
} from './protobuf-wire.ts';

/**
 * The node-port fields of a Service written in protobuf, read and rewritten without its schema, as the
 * apiserver's decoder reads them: the envelope's raw object is the last one; every `spec` on the wire is
 * merged into one (protobuf merges a message field that appears twice, so each is read); a scalar's last
 * value wins; an int32 is its low 32 bits, signed. Field numbers from k8s.io/api core/v1 generated.proto:
 * Service {spec 2}, ServiceSpec {ports 1, type 4, externalTrafficPolicy 11, healthCheckNodePort 12,
 * allocateLoadBalancerNodePorts 20}, ServicePort {name 1, protocol 2, port 3, nodePort 5}.
 */

const SERVICE_SPEC = 2;
const SPEC_PORTS = 1;
const SPEC_TYPE = 4;
const SPEC_EXTERNAL_TRAFFIC_POLICY = 11;
const SPEC_HEALTH_CHECK_NODE_PORT = 12;
const SPEC_ALLOCATE_LOAD_BALANCER_NODE_PORTS = 20;
const PORT_NAME = 1;
const PORT_PROTOCOL = 2;
const PORT_PORT = 3;
const PORT_NODE_PORT = 5;

/** What a protobuf Service body says of its node ports (metadata left empty); undefined if it is no envelope. */
export function readProtobufService(body: Buffer): Service | undefined {
  const service = openEnvelope(body)?.inner;
  if (!service) return undefined;
  const spec = mergedSpec(service);
  const read: ServiceSpec = {
    ports: spans(spec, SPEC_PORTS, 2).map((span) => {
      const port = spec.subarray(span.start, span.end);
      const name = stringField(port, PORT_NAME);
      const protocol = stringField(port, PORT_PROTOCOL);
      const number = lastInt32(port, PORT_PORT);
      const nodePort = lastInt32(port, PORT_NODE_PORT);
      return {
        ...(name !== undefined ? { name } : {}),
        ...(protocol !== undefined ? { protocol } : {}),
        ...(number !== undefined ? { port: number } : {}),
        ...(nodePort !== undefined ? { nodePort } : {}),
      };
    }),
  };
  const type = stringField(spec, SPEC_TYPE);
  if (type !== undefined) read.type = type;
  const policy = stringField(spec, SPEC_EXTERNAL_TRAFFIC_POLICY);
  if (policy !== undefined) read.externalTrafficPolicy = policy;
  const healthCheck = lastInt32(spec, SPEC_HEALTH_CHECK_NODE_PORT);
  if (healthCheck !== undefined) read.healthCheckNodePort = healthCheck;
  const allocate = spans(spec, SPEC_ALLOCATE_LOAD_BALANCER_NODE_PORTS, 0).at(-1);
  if (allocate) read.allocateLoadBalancerNodePorts = varintAt(spec, allocate.start) !== 0;
  return { metadata: {}, spec: read };
}

/**
 * `body` with the node ports of `claim`, port by port and the health check's: each appended to its message
 * (the last value wins), the spec written once, merged, everything else of the body kept as it was.
 */
export function protobufServiceWithNodePorts(body: Buffer, claim: Service): Buffer {
  const envelope = openEnvelope(body);
  if (!envelope) throw new TypeError('not a protobuf Service');
  const service = envelope.inner;
  const claimed = claim.spec?.ports ?? [];
  let index = 0;
  const spec = mergedSpec(service);
  const parts = fieldSpans(spec).map((span) => {
    const whole = spec.subarray(span.tagStart, span.end);
    if (span.number !== SPEC_PORTS || span.wireType !== 2) return whole;
    const nodePort = claimed[index++]?.nodePort;
    if (!nodePort) return whole;
    return lengthDelimited(
      SPEC_PORTS,
      Buffer.concat([spec.subarray(span.start, span.end), varintField(PORT_NODE_PORT, nodePort)]),
    );
  });
  const healthCheck = claim.spec?.healthCheckNodePort;
  if (healthCheck) parts.push(varintField(SPEC_HEALTH_CHECK_NODE_PORT, healthCheck));
  return envelope.with(
    Buffer.concat([...without(service, SERVICE_SPEC), lengthDelimited(SERVICE_SPEC, Buffer.concat(parts))]),
  );
}

/** Every `spec` of the Service, as one message (their concatenation is their merge). */
function mergedSpec(service: Buffer): Buffer {
  return Buffer.concat(spans(service, SERVICE_SPEC, 2).map((span) => service.subarray(span.start, span.end)));
}

function spans(message: Buffer, number: number, wireType: number): AnyFieldSpan[] {
  return fieldSpans(message).filter((span) => span.number === number && span.wireType === wireType);
}

function lastInt32(message: Buffer, number: number): number | undefined {
  const span = spans(message, number, 0).at(-1);
  return span ? int32At(message, span.start) : undefined;
}

/** The fields of `message` other than `number`, each as it was on the wire. */
function without(message: Buffer, number: number): Buffer[] {
  return fieldSpans(message)
    .filter((span) => span.number !== number)
    .map((span) => message.subarray(span.tagStart, span.end));
}
