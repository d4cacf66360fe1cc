import { enveloped } from './kube-protobuf.ts';
import { protobufServiceWithNodePorts, readProtobufService } from './protobuf-service.ts';
import { encodeVarint, lengthDelimited, varintField } from './protobuf-wire.ts';

const text = (number: number, value: string) => lengthDelimited(number, Buffer.from(value));
/** A varint field as raw bytes, for values JavaScript numbers cannot write (a negative int32's ten bytes). */
const rawVarint = (number: number, bytes: number[]) =>
  Buffer.concat([encodeVarint(number * 8), Buffer.from(bytes)]);

/** ServicePort {name 1, protocol 2, port 3, targetPort 4, nodePort 5}. */
const port = (name: string, number: number, nodePort?: number, ...extra: Buffer[]) =>
  lengthDelimited(
    1,
    Buffer.concat([
      text(1, name),
      text(2, 'TCP'),
      varintField(3, number),
      lengthDelimited(4, varintField(2, number)),
      ...(nodePort === undefined ? [] : [varintField(5, nodePort)]),
      ...extra,
    ]),
  );
const metadata = lengthDelimited(1, Buffer.concat([text(1, 'web'), text(3, 'shop')]));
const status = lengthDelimited(3, lengthDelimited(1, Buffer.alloc(0)));
const service = (...specs: Buffer[]) =>
  enveloped(
    'v1',
    'Service',
    Buffer.concat([metadata, ...specs.map((spec) => lengthDelimited(2, spec)), status]),
  );

describe('protobuf Services', () => {
  it('reads what the allocator reads: type, ports, traffic policy, health check, LoadBalancer opt-out', () => {
    const body = service(
      Buffer.concat([
        port('http', 80, 30080),
        port('https', 443),
        lengthDelimited(2, Buffer.concat([text(1, 'app'), text(2, 'web')])), // a selector entry
        text(4, 'LoadBalancer'),
        text(11, 'Local'),
        varintField(12, 32000),
        varintField(20, 0),
      ]),
    );
    expect(readProtobufService(body)).toEqual({
      metadata: {},
      spec: {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 32000,
        allocateLoadBalancerNodePorts: false,
        ports: [
          { name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 },
          { name: 'https', protocol: 'TCP', port: 443 },
        ],
      },
    });
    expect(readProtobufService(Buffer.from('{"kind":"Service"}'))).toBeUndefined();
  });

  it('reads the spec as the apiserver decodes it: every spec merged, last values winning, int32s wrapped', () => {
    const body = service(
      Buffer.concat([text(4, 'ClusterIP'), port('a', 80)]),
      // A second spec is merged into the first: its port is added, its type wins.
      Buffer.concat([
        text(4, 'NodePort'),
        // -1 as an int32: ten bytes on the wire.
        port('b', 81, undefined, rawVarint(5, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])),
        // 2^32 + 30001: Go keeps the low 32 bits, 30001; a second nodePort after it wins.
        port('c', 82, 2 ** 32 + 30001),
        port('d', 83, 30002, varintField(5, 30003)),
      ]),
    );
    expect(readProtobufService(body)?.spec).toEqual({
      type: 'NodePort',
      ports: [
        { name: 'a', protocol: 'TCP', port: 80 },
        { name: 'b', protocol: 'TCP', port: 81, nodePort: -1 },
        { name: 'c', protocol: 'TCP', port: 82, nodePort: 30001 },
        { name: 'd', protocol: 'TCP', port: 83, nodePort: 30003 },
      ],
    });
  });

  it('writes the claimed ports into the body, port by port, keeping everything else', () => {
    const body = service(
      Buffer.concat([text(4, 'NodePort'), port('a', 80)]),
      Buffer.concat([port('b', 81, 31000), text(11, 'Local')]),
    );
    const claim = {
      metadata: {},
      spec: { ports: [{ nodePort: 30100 }, { nodePort: 30101 }], healthCheckNodePort: 30102 },
    };
    const written = protobufServiceWithNodePorts(body, claim);
    expect(readProtobufService(written)?.spec).toEqual({
      type: 'NodePort',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 30102,
      ports: [
        { name: 'a', protocol: 'TCP', port: 80, nodePort: 30100 },
        { name: 'b', protocol: 'TCP', port: 81, nodePort: 30101 },
      ],
    });
    // The envelope, the metadata and the status as they were.
    expect(written.subarray(0, 4).toString('binary')).toBe('k8s\0');
    expect(written.includes(metadata)).toBe(true);
    expect(written.includes(status)).toBe(true);
    expect(written.includes(text(2, 'Service'))).toBe(true);
  });
});
