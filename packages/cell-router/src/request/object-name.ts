import { load } from 'js-yaml';

/** The names a create body gives its object. */
export interface BodyNames {
  name?: string;
  generateName?: string;
  namespace?: string;
}

/** A body the router cannot read a name from: answered 400 with this reason. */
export class BodyNameError extends Error {
  override readonly name = 'BodyNameError';
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
  if (type === 'application/vnd.kubernetes.protobuf') return namesFromProtobuf(body);
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
 * name, generateName and namespace. Only those fields are read; everything else is skipped by wire type.
 */
function namesFromProtobuf(body: Buffer): BodyNames {
  if (body.length < 4 || !body.subarray(0, 4).equals(PROTOBUF_MAGIC)) {
    throw new BodyNameError('the request body is not a Kubernetes protobuf message (no k8s\\0 prefix)');
  }
  const raw = field(body.subarray(4), 2);
  if (!raw) throw new BodyNameError('the protobuf envelope has no object');
  const metadata = field(raw, 1);
  if (!metadata) return {};
  const text = (number: number) => {
    const bytes = field(metadata, number);
    return bytes && bytes.length > 0 ? bytes.toString('utf8') : undefined;
  };
  const [name, generateName, namespace] = [text(1), text(2), text(3)];
  return {
    ...(name ? { name } : {}),
    ...(generateName ? { generateName } : {}),
    ...(namespace ? { namespace } : {}),
  };
}

/** The bytes of the first length-delimited field `number` of a message. */
function field(message: Buffer, number: number): Buffer | undefined {
  let offset = 0;
  while (offset < message.length) {
    const [tag, afterTag] = varint(message, offset);
    const wireType = tag % 8;
    const fieldNumber = Math.floor(tag / 8);
    offset = afterTag;
    switch (wireType) {
      case 0:
        offset = varint(message, offset)[1];
        break;
      case 1:
        offset += 8;
        break;
      case 2: {
        const [length, start] = varint(message, offset);
        const end = start + length;
        if (end > message.length) throw new BodyNameError('the protobuf body is truncated');
        if (fieldNumber === number) return message.subarray(start, end);
        offset = end;
        break;
      }
      case 5:
        offset += 4;
        break;
      default:
        throw new BodyNameError(`the protobuf body has an unsupported wire type ${wireType}`);
    }
  }
  return undefined;
}

/** A base-128 varint; arithmetic, not bitwise operators, so values past 2^31 stay whole. */
function varint(buffer: Buffer, offset: number): [value: number, next: number] {
  let value = 0;
  let scale = 1;
  for (let i = offset; i < buffer.length && i < offset + 10; i++) {
    const byte = buffer[i]!;
    value += (byte % 128) * scale;
    if (byte < 128) return [value, i + 1];
    scale *= 128;
  }
  throw new BodyNameError('the protobuf body is truncated');
}
