import { decodeWriteBody, duplicateKey } from './write-body.ts';

const json = (text: string) => decodeWriteBody(Buffer.from(text), 'application/json');
const yaml = (text: string) => decodeWriteBody(Buffer.from(text), 'application/apply-patch+yaml');

describe('decodeWriteBody', () => {
  it('reads JSON, escapes and all, and YAML', () => {
    expect(json('{"metadata":{"labels":{"cellfed.io\\u002fx":"1"}}}')).toEqual({
      value: { metadata: { labels: { 'cellfed.io/x': '1' } } },
    });
    expect(yaml('metadata:\n  name: web\n')).toEqual({ value: { metadata: { name: 'web' } } });
  });

  it('refuses a JSON key given twice in one object, which Go would merge and JavaScript would not', () => {
    expect(json('{"metadata":{"labels":{"cellfed.io/x":"y"},"labels":{"app":"a"}}}')).toEqual({
      refused: 'the request body has the key "labels" twice in one object',
    });
    expect(json('{"metadata":{"name":"a"},"metadata":{"name":"a"}}')).toMatchObject({
      refused: expect.any(String),
    });
    // The same key in different objects, in arrays, and in strings is fine.
    expect(
      json('{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}],"d":"{\\"k\\":1,\\"k\\":2}"}'),
    ).toHaveProperty('value');
  });

  it('refuses YAML with a merge key or an alias (an alias bomb is a few bytes)', () => {
    expect(yaml('metadata:\n  labels: {app: web, <<: {cellfed.io/x: y}}\n')).toMatchObject({
      refused: expect.stringContaining('merge key'),
    });
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${'bcdefghi'[i]}: &${'bcdefghi'[i]} [*${'abcdefgh'[i]}, *${'abcdefgh'[i]}, *${'abcdefgh'[i]}]`,
      ),
    ].join('\n');
    expect(yaml(bomb)).toMatchObject({ refused: expect.stringContaining('alias') });
  });

  it('says what does not parse', () => {
    expect(json('{"metadata":')).toEqual({ refused: 'the request body is not valid JSON' });
    expect(yaml('a: [')).toMatchObject({ refused: expect.stringContaining('not valid YAML') });
  });
});

describe('duplicateKey', () => {
  it('finds the first key twice in one object', () => {
    expect(duplicateKey('{"a":1,"b":{"a":2},"a":3}')).toBe('a');
    expect(duplicateKey('[{"a":1},{"a":1}]')).toBeUndefined();
    expect(duplicateKey('{"\\u0061":1,"a":2}')).toBe('a');
  });
});
