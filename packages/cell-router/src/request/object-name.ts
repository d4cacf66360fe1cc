import { load } from 'js-yaml';
import { PROTOBUF } from '@cellfed/federation';

import { appendToNested, findField, lengthDelimited, nestedField } from './protobuf-wire.ts';
import { BodyNameError, ProtobufWireError } from '../errors.ts';

/** The names a create body gives its object. */
export interface BodyNames {
  name?: string;
  generateName?: string;
  namespace?: string;
}

/** `application/yaml; charset=utf-8` → `application/yaml`; JSON when the header is absent, as kube assumes. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
}

/** The magic bytes before every Kubernetes protobuf body (k8s.io/apimachinery runtime/serializer/protobuf). */
const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/**
 * Reads `metadata.name`, `generateName` and `namespace` from a create body in any encoding kube-apiserver
 * accepts: JSON, YAML, or the protobuf envelope client-go sends when asked to.
 */
export function namesFromBody(contentType: string | undefined, body: Buffer): BodyNames {
  const type = mediaType(contentType);
  if (type === PROTOBUF) return namesFromProtobuf(body);
  let object: unknown;
  try {
    object = type === 'application/yaml' ? load(body.toString('utf8')) : JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new BodyNameError(
      `the request body is not valid ${type === 'application/yaml' ? 'YAML' : 'JSON'}: ${(error as Error).message}`,
    );
  }
  const metadata = (object as { metadata?: Record<string, unknown> } | null)?.metadata;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) {
    throw new BodyNameError('the request body is not an object');
  }
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  return {
    ...(text(metadata?.name) ? { name: text(metadata?.name)! } : {}),
    ...(text(metadata?.generateName) ? { generateName: text(metadata?.generateName)! } : {}),
    ...(text(metadata?.namespace) ? { namespace: text(metadata?.namespace)! } : {}),
  };
}

/**
 * The envelope is a `runtime.Unknown` (1: typeMeta, 2: raw, 3: contentEncoding, 4: contentType); `raw` is
 * the object, whose field 1 is `ObjectMeta` in every Kubernetes type, and ObjectMeta's fields 1, 2 and 3 are
 * name, generateName and namespace.
 */
const METADATA_PATH = [2, 1] as const;
const NAME_FIELD = 1;

function namesFromProtobuf(body: Buffer): BodyNames {
  const envelope = protobufEnvelope(body);
  return wire(() => {
    if (!findField(envelope, 2)) throw new BodyNameError('the protobuf envelope has no object');
    const metadata = nestedField(envelope, METADATA_PATH);
    if (!metadata) return {};
    const text = (number: number) => nestedField(metadata, [number])?.toString('utf8') || undefined;
    const [name, generateName, namespace] = [text(1), text(2), text(3)];
    return {
      ...(name ? { name } : {}),
      ...(generateName ? { generateName } : {}),
      ...(namespace ? { namespace } : {}),
    };
  });
}

/** A create body with `metadata.name` set, in the same encoding (YAML becomes JSON: kube accepts both). */
export function withName(
  contentType: string | undefined,
  body: Buffer,
  name: string,
): { body: Buffer; contentType: string } {
  const type = mediaType(contentType);
  if (type === PROTOBUF) {
    const envelope = protobufEnvelope(body);
    const named = wire(() =>
      appendToNested(envelope, METADATA_PATH, lengthDelimited(NAME_FIELD, Buffer.from(name, 'utf8'))),
    );
    return { body: Buffer.concat([PROTOBUF_MAGIC, named]), contentType: contentType! };
  }
  const object = (
    type === 'application/yaml' ? load(body.toString('utf8')) : JSON.parse(body.toString('utf8'))
  ) as {
    metadata: Record<string, unknown>;
  };
  object.metadata.name = name;
  return { body: Buffer.from(JSON.stringify(object)), contentType: 'application/json' };
}

function protobufEnvelope(body: Buffer): Buffer {
  if (body.length < 4 || !body.subarray(0, 4).equals(PROTOBUF_MAGIC)) {
    throw new BodyNameError('the request body is not a Kubernetes protobuf message (no k8s\\0 prefix)');
  }
  return body.subarray(4);
}

/** Wire-format problems are body problems (400) to the caller. */
function wire<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ProtobufWireError) throw new BodyNameError(error.message);
    throw error;
  }
}
