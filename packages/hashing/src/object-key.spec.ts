import { HashingErrorCode } from './errors';
import { isShardBy, objectKey, shardByForNamespace } from './object-key';

describe('objectKey', () => {
  it.each([
    [{ namespace: 'shop', name: 'web' }, 'name', 'shop/web'],
    [{ namespace: 'shop', name: 'web' }, 'namespace', 'shop'],
    [{ name: 'cluster-thing' }, 'name', '/cluster-thing'],
    [{ namespace: '', name: 'cluster-thing' }, 'namespace', '/cluster-thing'],
  ] as const)('%j with shardBy %s → %j', (ref, shardBy, key) => {
    expect(objectKey(ref, shardBy)).toBe(key);
  });

  it('defaults to shardBy name', () => {
    expect(objectKey({ namespace: 'a', name: 'b' })).toBe('a/b');
  });

  it('rejects an object without a name', () => {
    expect(() => objectKey({ namespace: 'a', name: '' })).toThrow(
      expect.objectContaining({ code: HashingErrorCode.InvalidObjectRef }),
    );
  });
});

describe('shardByForNamespace', () => {
  it('takes a valid label and ignores anything else', () => {
    expect(shardByForNamespace('name', { 'cellfed.io/shard-by': 'namespace' })).toBe('namespace');
    expect(shardByForNamespace('namespace', { 'cellfed.io/shard-by': 'name' })).toBe('name');
    expect(shardByForNamespace('name', { 'cellfed.io/shard-by': 'Namespace' })).toBe('name');
    expect(shardByForNamespace('namespace', undefined)).toBe('namespace');
    expect(isShardBy('Namespace')).toBe(false);
  });
});
