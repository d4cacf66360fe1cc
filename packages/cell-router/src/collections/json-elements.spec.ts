import { arrayElements } from './json-elements.ts';

const elementsOf = (document: string, field: string) => {
  const bytes = Buffer.from(document);
  return arrayElements(bytes, field)?.map(([start, end]) => bytes.subarray(start, end).toString());
};

describe('arrayElements', () => {
  it('finds each element of a list as the cell wrote it, strings and nesting respected', () => {
    const items = [
      { metadata: { name: 'a', annotations: { tricky: '}],{"items":[' } }, data: { x: 'say "hi" \\' } },
      { metadata: { name: 'ü-ñ', labels: { 'a/b': 'c' } }, spec: { list: [[1, 2], { items: [3] }] } },
      { metadata: { name: 'c' }, data: { empty: '', backslashes: '\\\\"' } },
    ];
    const document = JSON.stringify({
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '12', items: 'not this one' },
      items,
    });
    expect(elementsOf(document, 'items')).toEqual(items.map((item) => JSON.stringify(item)));
  });

  it('reads pretty-printed documents, Table rows, scalars and empty arrays', () => {
    const rows = [{ cells: ['a', 1], object: { metadata: { name: 'a' } } }, 7, null, 'x'];
    expect(elementsOf(JSON.stringify({ kind: 'Table', rows }, null, 2), 'rows')).toEqual(
      rows.map((row) => JSON.stringify(row, null, 2).replaceAll('\n', '\n    ')),
    );
    expect(elementsOf('{"kind":"List","items":[]}', 'items')).toEqual([]);
    expect(elementsOf('{"kind":"List","items" : [ 1 , 2 ] }', 'items')).toEqual(['1', '2']);
  });

  it('answers undefined when there is no such array or the document is cut short', () => {
    expect(elementsOf('{"kind":"List"}', 'items')).toBeUndefined();
    expect(elementsOf('{"metadata":{"items":[1]}}', 'items')).toBeUndefined();
    expect(elementsOf('{"items":[{"a":"b', 'items')).toBeUndefined();
    expect(elementsOf('{"items":[1,2', 'items')).toBeUndefined();
  });
});
