import { withRequirement } from './selector-terms.ts';

describe('withRequirement', () => {
  it('adds a term to a selector, or is the term', () => {
    expect(withRequirement(null, 'metadata.name=x')).toBe('metadata.name=x');
    expect(withRequirement('a=b', 'metadata.name=x')).toBe('a=b,metadata.name=x');
    expect(withRequirement('a=b\\\\', 'metadata.name=x')).toBe('a=b\\\\,metadata.name=x');
  });

  it('leaves a selector ending in an unpaired escape as it is (the apiserver refuses it)', () => {
    expect(withRequirement('a=b\\', 'metadata.name=x')).toBe('a=b\\');
  });
});
