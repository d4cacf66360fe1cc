import { namesFromBody, withName } from './object-name.ts';
import { BodyNameError } from '../errors.ts';

/** Encodes a length-delimited protobuf field. */
function bytesField(number: number, value: Buffer | string): Buffer {
  const payload = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.concat([varint(number * 8 + 2), varint(payload.length), payload]);
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value >= 128) {
    bytes.push((value % 128) + 128);
    value = Math.floor(value / 128);
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

/** A Deployment as client-go encodes it: magic, runtime.Unknown{typeMeta, raw{metadata{name, …}, spec}}. */
function protobufDeployment(metadata: { name?: string; generateName?: string; namespace?: string }): Buffer {
  const objectMeta = Buffer.concat([
    metadata.name ? bytesField(1, metadata.name) : Buffer.alloc(0),
    metadata.generateName ? bytesField(2, metadata.generateName) : Buffer.alloc(0),
    metadata.namespace ? bytesField(3, metadata.namespace) : Buffer.alloc(0),
    // resourceVersion (6) and a varint field (generation, 7) to skip.
    bytesField(6, '42'),
    Buffer.concat([varint(7 * 8 + 0), varint(3_000_000_000)]),
  ]);
  const raw = Buffer.concat([bytesField(1, objectMeta), bytesField(2, Buffer.from([0x08, 0x03]))]);
  const typeMeta = Buffer.concat([bytesField(1, 'apps/v1'), bytesField(2, 'Deployment')]);
  return Buffer.concat([
    Buffer.from('k8s\0', 'binary'),
    bytesField(1, typeMeta),
    bytesField(2, raw),
    bytesField(4, 'application/vnd.kubernetes.protobuf'),
  ]);
}

describe('namesFromBody', () => {
  it('reads JSON', () => {
    const body = Buffer.from(JSON.stringify({ metadata: { name: 'web', namespace: 'team' }, spec: {} }));
    expect(namesFromBody('application/json', body)).toEqual({ name: 'web', namespace: 'team' });
    expect(namesFromBody(undefined, Buffer.from('{"metadata":{"generateName":"web-"}}'))).toEqual({
      generateName: 'web-',
    });
  });

  it('reads YAML', () => {
    const body = Buffer.from('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: team\n');
    expect(namesFromBody('application/yaml; charset=utf-8', body)).toEqual({
      name: 'cfg',
      namespace: 'team',
    });
  });

  it('reads the protobuf envelope client-go sends, skipping fields it does not need', () => {
    expect(
      namesFromBody(
        'application/vnd.kubernetes.protobuf',
        protobufDeployment({ name: 'web', namespace: 'team' }),
      ),
    ).toEqual({
      name: 'web',
      namespace: 'team',
    });
    expect(
      namesFromBody('application/vnd.kubernetes.protobuf', protobufDeployment({ generateName: 'web-' })),
    ).toEqual({
      generateName: 'web-',
    });
  });

  it('says what is wrong with a body it cannot read', () => {
    expect(() => namesFromBody('application/json', Buffer.from('{"metadata":'))).toThrow(BodyNameError);
    expect(() => namesFromBody('application/json', Buffer.from('[1]'))).toThrow('not an object');
    expect(() => namesFromBody('application/vnd.kubernetes.protobuf', Buffer.from('nope'))).toThrow('k8s');
    // Cut inside the object (the content-type field at the end is 37 bytes).
    const truncated = protobufDeployment({ name: 'web' });
    expect(() =>
      namesFromBody('application/vnd.kubernetes.protobuf', truncated.subarray(0, truncated.length - 45)),
    ).toThrow(BodyNameError);
  });

  it('returns no name when the body has none', () => {
    expect(namesFromBody('application/json', Buffer.from('{"kind":"ConfigMap"}'))).toEqual({});
  });
});

describe('withName', () => {
  const PROTOBUF = 'application/vnd.kubernetes.protobuf';

  it('names a protobuf body in place: the name is read back, every other field kept', () => {
    const body = protobufDeployment({ generateName: 'web-', namespace: 'team' });
    const named = withName(PROTOBUF, body, 'web-x7k2p');
    expect(named.contentType).toBe(PROTOBUF);
    expect(namesFromBody(PROTOBUF, named.body)).toEqual({
      name: 'web-x7k2p',
      generateName: 'web-',
      namespace: 'team',
    });
    // Only the name's bytes (tag, length, 9 characters) were added; the lengths around them grew to match.
    expect(named.body.length).toBe(body.length + 11);
    expect(named.body.includes(Buffer.from('application/vnd.kubernetes.protobuf'))).toBe(true);
  });

  it('overrides an empty name field, as client-go writes one', () => {
    const objectMeta = Buffer.concat([bytesField(1, ''), bytesField(2, 'job-')]);
    const body = Buffer.concat([
      Buffer.from('k8s\0', 'binary'),
      bytesField(2, Buffer.concat([bytesField(1, objectMeta)])),
    ]);
    expect(namesFromBody(PROTOBUF, withName(PROTOBUF, body, 'job-abcde').body).name).toBe('job-abcde');
  });

  it('names JSON and YAML bodies as JSON', () => {
    const yaml = Buffer.from('kind: ConfigMap\nmetadata:\n  generateName: cfg-\ndata:\n  a: "1"\n');
    const named = withName('application/yaml', yaml, 'cfg-abcde');
    expect(named.contentType).toBe('application/json');
    expect(JSON.parse(named.body.toString())).toEqual({
      kind: 'ConfigMap',
      metadata: { generateName: 'cfg-', name: 'cfg-abcde' },
      data: { a: '1' },
    });
    const json = withName(undefined, Buffer.from('{"metadata":{"generateName":"a-"}}'), 'a-bcdfg');
    expect(JSON.parse(json.body.toString()).metadata.name).toBe('a-bcdfg');
  });
});
