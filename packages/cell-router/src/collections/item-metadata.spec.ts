import fc from 'fast-check';

import { itemWithMetadataOnly } from './item-metadata.ts';

describe('itemWithMetadataOnly', () => {
  const strings = fc.string({ unit: 'binary', maxLength: 12 });
  const metadata = fc.record(
    {
      name: strings,
      namespace: strings,
      labels: fc.dictionary(strings, strings, { maxKeys: 3 }),
      ownerReferences: fc.array(fc.record({ name: strings, controller: fc.boolean() }), { maxLength: 2 }),
      annotations: fc.dictionary(strings, fc.jsonValue({ maxDepth: 2 }).map(String), { maxKeys: 2 }),
    },
    { requiredKeys: ['name'] },
  );
  // Fields before and after the metadata, some holding a `metadata` of their own (a pod template's).
  const other = fc.dictionary(
    strings.filter((key) => key !== 'metadata'),
    fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.record({ metadata: fc.jsonValue({ maxDepth: 2 }) })),
    { maxKeys: 3 },
  );

  it('parses only the metadata, and finds the same as JSON.parse whatever comes around it', () => {
    fc.assert(
      fc.property(other, metadata, other, fc.boolean(), (before, meta, after, spaced) => {
        const item = { ...before, metadata: meta, ...after };
        const bytes = Buffer.from(JSON.stringify(item, null, spaced ? 2 : undefined));
        const parsed = JSON.parse(bytes.toString('utf8')) as { metadata: unknown };
        expect(itemWithMetadataOnly(bytes, 0)).toEqual({ metadata: parsed.metadata });
      }),
      { numRuns: 300 },
    );
  });

  it('parses a small item whole, a large one for its metadata alone', () => {
    const item = { metadata: { name: 'a' }, data: { big: 'x'.repeat(4096) } };
    expect(itemWithMetadataOnly(Buffer.from(JSON.stringify({ ...item, data: {} })))).toEqual({
      ...item,
      data: {},
    });
    expect(itemWithMetadataOnly(Buffer.from(JSON.stringify(item)))).toEqual({ metadata: { name: 'a' } });
  });

  it('parses an item whole where its metadata is not an object of its own', () => {
    for (const item of [
      { kind: 'X' },
      { metadata: null, data: { a: '1' } },
      { spec: { metadata: { name: 'inner' } } },
    ])
      expect(itemWithMetadataOnly(Buffer.from(JSON.stringify(item)), 0)).toEqual(item);
  });
});
