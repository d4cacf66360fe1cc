import { queryBool } from './query-bool.ts';

describe('queryBool', () => {
  it.each([
    [null, false],
    ['0', false],
    ['false', false],
    ['FALSE', false],
    ['False', false],
    ['1', true],
    ['true', true],
    ['True', true],
    ['yes', true],
    ['', true],
  ])('reads %j as kube-apiserver does: %s', (value, expected) => {
    expect(queryBool(value)).toBe(expected);
  });
});
