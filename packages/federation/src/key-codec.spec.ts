import { FederationErrorCode } from './errors.ts';
import { keyCodec } from './key-codec.ts';

const objects = keyCodec(['cell', 'namespace', 'name'], { mayBeEmpty: ['namespace'] });
const invalid = expect.objectContaining({ code: FederationErrorCode.InvalidKey });

describe('keyCodec', () => {
  it('writes fields in order and reads them back', () => {
    for (const key of [
      { cell: 'cell-a', namespace: 'default', name: 'web' },
      { cell: 'cell-a', namespace: '', name: 'cluster-thing' },
    ])
      expect(objects.parse(objects.format(key))).toEqual(key);
    expect(objects.format({ cell: 'c', namespace: '', name: 'n' })).toBe('c//n');
    expect(objects.shape).toBe('cell/namespace/name');
  });

  it.each(['', 'a', 'a/b', '/ns/name', 'a/ns/', 'a/ns/name/extra'])('refuses to read %p', (text) => {
    expect(() => objects.parse(text)).toThrow(invalid);
  });

  it('refuses to write a field holding a slash, or an empty one that may not be', () => {
    expect(() => objects.format({ cell: 'a/b', namespace: 'ns', name: 'x' })).toThrow(invalid);
    expect(() => objects.format({ cell: '', namespace: 'ns', name: 'x' })).toThrow(invalid);
    const namespaces = keyCodec(['cell', 'namespace']);
    expect(() => namespaces.format({ cell: 'a', namespace: '' })).toThrow(invalid);
    expect(() => namespaces.parse('a/')).toThrow(invalid);
  });
});
