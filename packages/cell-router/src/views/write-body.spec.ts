import { decodeWriteBody, jsonShape, MAX_DEPTH, parseMergingDuplicates } from './write-body.ts';

const json = (text: string) => decodeWriteBody(Buffer.from(text), 'application/json');
const yaml = (text: string) => decodeWriteBody(Buffer.from(text), 'application/apply-patch+yaml');

describe('decodeWriteBody', () => {
  it('reads JSON, escapes and all, and YAML', () => {
    expect(json('{"metadata":{"labels":{"cellfed.io\\u002fx":"1"}}}')).toEqual({
      value: { metadata: { labels: { 'cellfed.io/x': '1' } } },
    });
    expect(yaml('metadata:\n  name: web\n')).toEqual({ value: { metadata: { name: 'web' } } });
  });

  it('reads a JSON key given twice in one object as Go decodes it into a typed object: merged', () => {
    expect(json('{"metadata":{"labels":{"cellfed.io/x":"y"},"labels":{"app":"a"}}}')).toEqual({
      value: { metadata: { labels: { 'cellfed.io/x': 'y', app: 'a' } } },
    });
    expect(
      json('{"metadata":{"name":"a","labels":{"k":"1"}},"metadata":{"labels":{"k":"2"}},"n":[1],"n":[2]}'),
    ).toEqual({
      value: { metadata: { name: 'a', labels: { k: '2' } }, n: [2] },
    });
  });

  it('refuses nesting deeper than any object, in JSON or YAML', () => {
    const deep = `${'['.repeat(MAX_DEPTH + 1)}${']'.repeat(MAX_DEPTH + 1)}`;
    expect(json(deep)).toEqual({ refused: `the request body nests deeper than ${MAX_DEPTH} levels` });
    expect(json(`{"a":${'['.repeat(10)}1${']'.repeat(10)}}`)).toHaveProperty('value');
  });

  it('refuses YAML with a merge key or an alias (an alias bomb is a few bytes)', () => {
    expect(yaml('metadata:\n  labels: {app: web, <<: {cellfed.io/x: y}}\n')).toMatchObject({
      refused: expect.stringContaining('merge key'),
    });
    const names = 'abcdefghi';
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 8 },
        (_, i) => `${names[i + 1]}: &${names[i + 1]} [*${names[i]}, *${names[i]}, *${names[i]}]`,
      ),
    ].join('\n');
    expect(yaml(bomb)).toMatchObject({ refused: expect.stringContaining('alias') });
  });

  it('says what does not parse', () => {
    expect(json('{"metadata":')).toEqual({ refused: 'the request body is not valid JSON' });
    expect(yaml('a: [')).toMatchObject({ refused: expect.stringContaining('not valid YAML') });
  });
});

describe('jsonShape and parseMergingDuplicates', () => {
  it('tell depth and duplicates in one pass, keys in strings and escapes aside', () => {
    expect(jsonShape('{"a":1,"b":{"a":2},"a":3}')).toEqual({ depth: 2, duplicates: true });
    expect(jsonShape('[{"a":1},{"a":1}]')).toEqual({ depth: 2, duplicates: false });
    expect(jsonShape('{"\\u0061":1,"a":2,"s":"{\\"a\\":1,\\"a\\":2}"}').duplicates).toBe(true);
    expect(parseMergingDuplicates('{"a" : [1, {"b": null}], "s": "x\\"y", "n": -1.5e3, "t": true}')).toEqual({
      a: [1, { b: null }],
      s: 'x"y',
      n: -1500,
      t: true,
    });
  });
});
