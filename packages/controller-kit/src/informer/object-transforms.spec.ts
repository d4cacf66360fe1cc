import { compactMetadata, StringInterner, stripManagedFields } from './object-transforms.ts';

describe('object transforms', () => {
  it('strips managedFields and nothing else', () => {
    const object = { kind: 'ConfigMap', metadata: { name: 'a', managedFields: [{}] }, data: { x: '1' } };
    expect(stripManagedFields(object)).toEqual({
      kind: 'ConfigMap',
      metadata: { name: 'a' },
      data: { x: '1' },
    });
  });

  it('keeps only metadata for metadata-only caches, sharing repeated strings', () => {
    const compact = compactMetadata();
    const make = () =>
      JSON.parse(
        '{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","namespace":"team","labels":{"app":"web"},"managedFields":[{}]}}',
      );
    const first = compact(make());
    const second = compact(make());
    expect(first).toEqual({ metadata: { name: 'a', namespace: 'team', labels: { app: 'web' } } });
    expect(second).toEqual(first);
  });

  it('stops remembering new strings at its limit but still returns them', () => {
    const interner = new StringInterner(2);
    expect(['a', 'b', 'c', 'c'].map((value) => interner.intern(value))).toEqual(['a', 'b', 'c', 'c']);
  });
});
