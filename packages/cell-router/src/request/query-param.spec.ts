import { goQueryParams, isDryRun, withQuery } from './query-param.ts';

describe('query parameters', () => {
  it('reads a query as Go does: a pair with a semicolon or a bad escape dropped, + a space', () => {
    const params = goQueryParams('a=1;b=2&dryRun=All;&x=%zz&y=%41+b&dry%52un=All&&flag');
    expect([...params.entries()]).toEqual([
      ['y', 'A b'],
      ['dryRun', 'All'],
      ['flag', ''],
    ]);
  });

  it('tells a dry run as the apiserver will', () => {
    expect(isDryRun('/api/v1/namespaces/a/services?dryRun=All')).toBe(true);
    expect(isDryRun('/api/v1/namespaces/a/services?dry%52un=All')).toBe(true);
    // Go drops the pair with a semicolon, and `x`'s value is "?dryRun=All": no dry run, whatever the bytes say.
    expect(isDryRun('/api/v1/namespaces/a/services?dryRun=All;')).toBe(false);
    expect(isDryRun('/api/v1/namespaces/a/services?x=?dryRun=All')).toBe(false);
    expect(isDryRun('/api/v1/namespaces/a/services')).toBe(false);
  });

  it('sets and removes one parameter', () => {
    expect(withQuery('/p?a=1', 'dryRun', 'All')).toBe('/p?a=1&dryRun=All');
    expect(withQuery('/p?a=1&dryRun=All', 'dryRun', undefined)).toBe('/p?a=1');
  });
});
