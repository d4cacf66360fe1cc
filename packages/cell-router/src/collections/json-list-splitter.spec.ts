import fc from 'fast-check';

import { JsonListSplitter } from './json-list-splitter.ts';

/** Feeds `body` cut at `cuts` and collects what the splitter gives. */
function split(body: Buffer, cuts: number[]) {
  const splitter = new JsonListSplitter();
  const elements: string[] = [];
  let from = 0;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b).concat(body.length)) {
    if (cut <= from) continue;
    elements.push(...splitter.push(body.subarray(from, cut)).map((element) => element.toString('utf8')));
    from = cut;
  }
  return { elements, head: splitter.head, done: splitter.done };
}

const list = (items: unknown[], spaced = false) =>
  Buffer.from(
    JSON.stringify(
      { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '42' }, items },
      null,
      spaced ? 1 : undefined,
    ),
  );

describe('JsonListSplitter', () => {
  it('gives the fields before the items, then each item as the bytes written, however the body is cut', () => {
    const strings = fc.string({ unit: 'binary', maxLength: 12 });
    const item = fc.record({
      metadata: fc.record({ name: strings, labels: fc.dictionary(strings, strings, { maxKeys: 3 }) }),
      data: fc.dictionary(strings, fc.oneof(strings, fc.array(strings, { maxLength: 3 })), { maxKeys: 3 }),
    });
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 8 }),
        fc.array(fc.nat(4000), { maxLength: 12 }),
        fc.boolean(),
        (items, cuts, spaced) => {
          const body = list(items, spaced);
          const { elements, head, done } = split(body, cuts);
          expect(elements.map((element) => JSON.parse(element) as unknown)).toEqual(items);
          if (!spaced) expect(elements).toEqual(items.map((one) => JSON.stringify(one)));
          expect(head).toEqual({
            kind: 'ConfigMapList',
            apiVersion: 'v1',
            metadata: { resourceVersion: '42' },
          });
          expect(done).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('ends strings right whatever runs of backslashes and quotes they hold, cut anywhere', () => {
    const tricky = fc.string({ unit: fc.constantFrom('\\', '"', 'x', '}', '['), maxLength: 10 });
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ metadata: fc.record({ name: tricky }), data: fc.array(tricky, { maxLength: 3 }) }),
          {
            maxLength: 5,
          },
        ),
        fc.array(fc.nat(600), { maxLength: 40 }),
        (items, cuts) => {
          expect(split(list(items), cuts).elements).toEqual(items.map((one) => JSON.stringify(one)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives the fields after the items too once the list has ended, as a custom resource list writes them', () => {
    // apiextensions-apiserver sorts a list's keys: items before kind and metadata.
    const body = Buffer.from(
      '{"apiVersion":"example.com/v1","items":[{"a":1},{"b":"],\\"kind\\":"}] , "kind":"WidgetList","metadata":{"resourceVersion":"9"}}',
    );
    fc.assert(
      fc.property(fc.array(fc.nat(body.length), { maxLength: 6 }), (cuts) => {
        const splitter = new JsonListSplitter();
        let from = 0;
        const elements: string[] = [];
        for (const cut of [...new Set(cuts)].sort((a, b) => a - b).concat(body.length)) {
          if (cut <= from) continue;
          elements.push(...splitter.push(body.subarray(from, cut)).map(String));
          from = cut;
        }
        expect(elements).toEqual(['{"a":1}', '{"b":"],\\"kind\\":"}']);
        expect(splitter.head).toEqual({ apiVersion: 'example.com/v1' });
        expect(splitter.allFields()).toEqual({
          apiVersion: 'example.com/v1',
          kind: 'WidgetList',
          metadata: { resourceVersion: '9' },
        });
      }),
      { numRuns: 100 },
    );
    expect(split(list([{ a: 1 }]), [5]).done).toBe(true);
    const kubeOrder = new JsonListSplitter();
    kubeOrder.push(list([{ a: 1 }]));
    expect(kubeOrder.allFields()).toEqual({
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '42' },
    });
  });

  it('is not done until the items array closes', () => {
    const body = list([{ a: 1 }, { b: '}]"' }]);
    const splitter = new JsonListSplitter();
    const cut = body.indexOf('{"b"');
    expect(splitter.push(body.subarray(0, cut)).map(String)).toEqual(['{"a":1}']);
    expect(splitter.done).toBe(false);
    expect(splitter.push(body.subarray(cut)).map(String)).toEqual(['{"b":"}]\\""}']);
    expect(splitter.done).toBe(true);
  });

  it('reads an empty list, also one whose items Go wrote as null (a nil slice), and refuses items of another type', () => {
    expect(split(list([]), [3])).toMatchObject({ elements: [], done: true });
    const nil = Buffer.from(
      '{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7"},"items":null}',
    );
    expect(split(nil, [20, 90])).toEqual({
      elements: [],
      head: {
        kind: 'PartialObjectMetadataList',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: '7' },
      },
      done: true,
    });
    expect(() => new JsonListSplitter().push(Buffer.from('{"kind":"List","items":"x"}'))).toThrow(
      /"items" is not an array/,
    );
  });
});
