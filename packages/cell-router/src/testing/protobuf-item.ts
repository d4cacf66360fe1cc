import { lengthDelimited, varintField } from '../request/protobuf-wire.ts';

/** An item message: ObjectMeta (field 1) with name, namespace, resourceVersion, creation and labels. */
export interface ProtobufMeta {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  creationSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Owner references by name, with their `controller` flag (field 6; absent when undefined). */
  owners?: { name: string; controller?: boolean }[];
}

export function protobufItem(meta: ProtobufMeta): Buffer {
  const fields = [
    ...(meta.name ? [lengthDelimited(1, Buffer.from(meta.name))] : []),
    ...(meta.namespace ? [lengthDelimited(3, Buffer.from(meta.namespace))] : []),
    ...(meta.resourceVersion ? [lengthDelimited(6, Buffer.from(meta.resourceVersion))] : []),
    ...(meta.creationSeconds === undefined ? [] : [lengthDelimited(8, varintField(1, meta.creationSeconds))]),
    ...mapField(11, meta.labels),
    ...mapField(12, meta.annotations),
    ...(meta.owners ?? []).map((owner) =>
      lengthDelimited(
        13,
        Buffer.concat([
          lengthDelimited(1, Buffer.from('CronJob')),
          lengthDelimited(3, Buffer.from(owner.name)),
          ...(owner.controller === undefined ? [] : [varintField(6, owner.controller ? 1 : 0)]),
        ]),
      ),
    ),
  ];
  // A spec after the metadata, as kube writes it.
  return Buffer.concat([lengthDelimited(1, Buffer.concat(fields)), lengthDelimited(2, Buffer.from('spec'))]);
}

/** An object in the `k8s\0` envelope, as a protobuf GET or watch event carries it. */
export function protobufEnveloped(meta: ProtobufMeta, kind = 'ConfigMap'): Buffer {
  const typeMeta = Buffer.concat([
    lengthDelimited(1, Buffer.from('v1')),
    lengthDelimited(2, Buffer.from(kind)),
  ]);
  return Buffer.concat([
    Buffer.from('k8s\0', 'binary'),
    lengthDelimited(1, typeMeta),
    lengthDelimited(2, protobufItem(meta)),
  ]);
}

function mapField(number: number, map: Record<string, string> | undefined): Buffer[] {
  return Object.entries(map ?? {}).map(([key, value]) =>
    lengthDelimited(
      number,
      Buffer.concat([lengthDelimited(1, Buffer.from(key)), lengthDelimited(2, Buffer.from(value))]),
    ),
  );
}

/** A Service in the `k8s\0` envelope: spec {ports 1 {port 3, nodePort 5}, type 4}, as client-go writes one. */
export function protobufService(spec: {
  type: string;
  ports: { port: number; nodePort?: number }[];
}): Buffer {
  const ports = spec.ports.map((port) =>
    lengthDelimited(
      1,
      Buffer.concat([
        varintField(3, port.port),
        ...(port.nodePort === undefined ? [] : [varintField(5, port.nodePort)]),
      ]),
    ),
  );
  const service = Buffer.concat([
    lengthDelimited(1, lengthDelimited(1, Buffer.from('web'))),
    lengthDelimited(2, Buffer.concat([...ports, lengthDelimited(4, Buffer.from(spec.type))])),
  ]);
  const typeMeta = Buffer.concat([
    lengthDelimited(1, Buffer.from('v1')),
    lengthDelimited(2, Buffer.from('Service')),
  ]);
  return Buffer.concat([
    Buffer.from('k8s\0', 'binary'),
    lengthDelimited(1, typeMeta),
    lengthDelimited(2, service),
  ]);
}
