import { contentHash } from './mirror-marks.ts';

describe('contentHash', () => {
  it('hashes an object the same whatever order its fields were read in, at any depth', () => {
    // As a list item typed by the mirror (kind added last), and as a watch event sends it (kind first).
    const listed = {
      metadata: { name: 'a', labels: { x: '1', y: '2' } },
      spec: { minAvailable: 1 },
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
    };
    const watched = {
      kind: 'PodDisruptionBudget',
      apiVersion: 'policy/v1',
      metadata: { labels: { y: '2', x: '1' }, name: 'a' },
      spec: { minAvailable: 1 },
    };
    expect(contentHash(watched)).toBe(contentHash(listed));
  });

  it('tells apart any change of a value, and the order of a list', () => {
    expect(contentHash({ spec: { minAvailable: 2 } })).not.toBe(contentHash({ spec: { minAvailable: 1 } }));
    expect(contentHash({ rules: ['a', 'b'] })).not.toBe(contentHash({ rules: ['b', 'a'] }));
  });
});
