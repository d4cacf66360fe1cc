import { FederationErrorCode } from '@cellfed/federation';
import {
  CONTROL_PLANE,
  controlPlaneNamespaceKey,
  formatKey,
  keyOf,
  lookupKey,
  parseKey,
} from './object-key.ts';

describe('object keys', () => {
  it('round-trips namespaced and cluster-scoped keys', () => {
    for (const key of [
      { cell: 'cell-a', namespace: 'default', name: 'web' },
      { cell: 'cell-a', namespace: '', name: 'cluster-thing' },
    ]) {
      expect(parseKey(formatKey(key))).toEqual(key);
    }
    expect(formatKey({ cell: 'c', namespace: '', name: 'n' })).toBe('c//n');
  });

  it('keys an object by its metadata', () => {
    expect(keyOf('cell-b', { metadata: { namespace: 'ns', name: 'x' } })).toBe('cell-b/ns/x');
    expect(keyOf('cell-b', { metadata: { name: 'x' } })).toBe('cell-b//x');
  });

  it.each(['', 'a', 'a/b', '/ns/name', 'a/ns/', 'a/ns/name/extra'])('rejects %p', (key) => {
    expect(() => parseKey(key)).toThrow(expect.objectContaining({ code: FederationErrorCode.InvalidKey }));
  });
});

describe('controlPlaneNamespaceKey', () => {
  it('is the key an informer of the control plane’s namespaces files a namespace under', () => {
    expect(controlPlaneNamespaceKey('shop')).toBe(keyOf(CONTROL_PLANE, { metadata: { name: 'shop' } }));
    expect(parseKey(controlPlaneNamespaceKey('shop')!)).toEqual({
      cell: CONTROL_PLANE,
      namespace: '',
      name: 'shop',
    });
  });

  it('is undefined for a name no namespace has, so a lookup misses instead of throwing', () => {
    // A pod template may name a ConfigMap `a/b` (the apiserver does not check the names volumes refer to).
    expect(lookupKey('cell-1', 'shop', 'a/b')).toBeUndefined();
    expect(lookupKey('cell-1', 'shop', 'web')).toBe('cell-1/shop/web');
    expect(lookupKey('cell-1', '', 'web')).toBe('cell-1//web');
    expect(controlPlaneNamespaceKey('')).toBeUndefined();
    expect(controlPlaneNamespaceKey('a/b')).toBeUndefined();
  });
});
