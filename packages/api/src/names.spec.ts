import { ORIGIN_GENERATION_ANNOTATION, shownGeneration } from './names.ts';

describe('shownGeneration', () => {
  it('counts on from the generation clients knew, by how far the copy has gone since its own', () => {
    const annotations = { [ORIGIN_GENERATION_ANNOTATION]: '7:2' };
    expect(shownGeneration(2, annotations)).toBe(7);
    expect(shownGeneration(5, annotations)).toBe(10);
  });

  it('is the stored generation of an object never copied, or a mark it cannot read', () => {
    expect(shownGeneration(3, undefined)).toBe(3);
    expect(shownGeneration(3, { [ORIGIN_GENERATION_ANNOTATION]: 'seven' })).toBe(3);
    expect(shownGeneration(3, { [ORIGIN_GENERATION_ANNOTATION]: '7:2:1' })).toBe(3);
  });
});
