import { lengthDelimited, varintField } from '../request/protobuf-wire.ts';

/** An item message: ObjectMeta (field 1) with name, namespace, resourceVersion, creation and labels. */
export function protobufItem(meta: {
  name: string;
  namespace?: string;
  resourceVersion?: string;
  creationSeconds?: number;
  labels?: Record<string, string>;
}): Buffer {
  const fields = [
    lengthDelimited(1, Buffer.from(meta.name)),
    ...(meta.namespace ? [lengthDelimited(3, Buffer.from(meta.namespace))] : []),
    ...(meta.resourceVersion ? [lengthDelimited(6, Buffer.from(meta.resourceVersion))] : []),
    ...(meta.creationSeconds === undefined ? [] : [lengthDelimited(8, varintField(1, meta.creationSeconds))]),
    ...Object.entries(meta.labels ?? {}).map(([key, value]) =>
      lengthDelimited(
        11,
        Buffer.concat([lengthDelimited(1, Buffer.from(key)), lengthDelimited(2, Buffer.from(value))]),
      ),
    ),
  ];
  // A spec after the metadata, as kube writes it.
  return Buffer.concat([lengthDelimited(1, Buffer.concat(fields)), lengthDelimited(2, Buffer.from('spec'))]);
}
