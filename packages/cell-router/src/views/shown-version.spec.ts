import { protobufItem } from '../testing/protobuf-item.ts';
import { lengthDelimited, nestedField } from '../request/protobuf-wire.ts';
import { shownVersion } from '../collections/source-versions.ts';
import { showAnswerVersion, showProtobufAnswerVersion, withShownVersion } from './shown-version.ts';

const shown = (own: string) => shownVersion('cell-1', own);

describe('withShownVersion', () => {
  it("gives an object its version as clients see it, leaving every other field's bytes alone", () => {
    const item = JSON.stringify({
      metadata: { name: 'web', namespace: 'shop', uid: 'u', resourceVersion: '812' },
      spec: { template: { metadata: { annotations: { note: '"resourceVersion":"1"' } } } },
    });
    const out = JSON.parse(withShownVersion(item, 'cell-1').toString());
    expect(out.metadata.resourceVersion).toBe(shown('812'));
    expect(out.spec.template.metadata.annotations.note).toBe('"resourceVersion":"1"');
  });

  it('finds the top-level metadata, and in it the top-level version, whatever comes before', () => {
    // A custom resource's keys are sorted: `data` (holding a `metadata`) before `metadata`; in metadata,
    // annotations (one keyed resourceVersion) before resourceVersion.
    const item = JSON.stringify({
      apiVersion: 'x/v1',
      data: { metadata: { resourceVersion: '1' }, s: 'a\\"b{' },
      kind: 'Thing',
      metadata: { annotations: { resourceVersion: '2' }, name: 't', resourceVersion: '3' },
    });
    const out = JSON.parse(withShownVersion(item, 'cell-1').toString());
    expect(out.data.metadata.resourceVersion).toBe('1');
    expect(out.metadata.annotations.resourceVersion).toBe('2');
    expect(out.metadata.resourceVersion).toBe(shown('3'));
  });

  it("gives a Table row's object its version", () => {
    const row = JSON.stringify({
      cells: ['web', '"resourceVersion":"9"'],
      object: { metadata: { name: 'web', resourceVersion: '5' } },
    });
    const out = JSON.parse(withShownVersion(Buffer.from(row), 'cell-1').toString());
    expect(out.cells).toEqual(['web', '"resourceVersion":"9"']);
    expect(out.object.metadata.resourceVersion).toBe(shown('5'));
  });

  it('reads JSON pretty-printed as kube-apiserver writes it for ?pretty and for curl', () => {
    const pretty = JSON.stringify(
      { metadata: { annotations: { resourceVersion: '1' }, resourceVersion: '4' } },
      null,
      2,
    );
    const out = JSON.parse(withShownVersion(pretty, 'cell-1').toString());
    expect(out.metadata).toEqual({ annotations: { resourceVersion: '1' }, resourceVersion: shown('4') });
  });

  it('leaves an object without one apiserver’s version as it is', () => {
    for (const item of [
      JSON.stringify({ metadata: { name: 'web' } }),
      JSON.stringify({ metadata: { name: 'web', resourceVersion: 'cf1.abc' } }),
      JSON.stringify({ spec: { metadata: { resourceVersion: '1' } } }),
    ])
      expect(withShownVersion(item, 'cell-1')).toBe(item);
  });
});

describe('single answers', () => {
  it('shows a Table of one object at its version, the table and its row alike', () => {
    const table = Buffer.from(
      JSON.stringify({
        kind: 'Table',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: '7' },
        rows: [{ cells: ['x'], object: { metadata: { name: 'x', resourceVersion: '7' } } }],
      }),
    );
    const out = JSON.parse(showAnswerVersion(table, 'cell-1').toString());
    expect(out.metadata.resourceVersion).toBe(shown('7'));
    expect(out.rows[0].object.metadata.resourceVersion).toBe(shown('7'));
  });

  it('edits a Table in its bytes: nothing else in it changes, integers past 2^53 included', () => {
    const row = (name: string) =>
      `{"cells":["${name}",9007199254740993],"object":{"kind":"PartialObjectMetadata","metadata":{"name":"${name}","resourceVersion":"8"}}}`;
    const table = `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"8"},"columnDefinitions":[],"rows":[${row('a')}, ${row('b')}]}`;
    const out = showAnswerVersion(Buffer.from(table), 'cell-1').toString();
    expect(out).toBe(table.replaceAll('"resourceVersion":"8"', `"resourceVersion":"${shown('8')}"`));
  });

  it('shows a protobuf object at its version', () => {
    const item = protobufItem({ name: 'x', namespace: 'ns', resourceVersion: '42' });
    const answer = Buffer.concat([Buffer.from('k8s\0', 'latin1'), lengthDelimited(2, item)]);
    const out = showProtobufAnswerVersion(answer, 'cell-1');
    // The last occurrence of ObjectMeta's field 6 is what decoders read.
    const meta = nestedField(out.subarray(4), [2, 1])!;
    expect(meta.toString('latin1')).toContain(shown('42'));
  });
});
