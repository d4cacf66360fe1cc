import { generateName } from './generate-name.ts';

describe('generateName', () => {
  it("appends five characters of the apiserver's alphabet", () => {
    expect(generateName('web-')).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('keeps the name within 63 characters', () => {
    const name = generateName('x'.repeat(100));
    expect(name).toHaveLength(63);
    expect(name.startsWith('x'.repeat(58))).toBe(true);
  });

  it('uses every character of the alphabet', () => {
    let i = 0;
    const seen = new Set(
      generateName('', () => i++ % 27) + generateName('', () => i++ % 27) + generateName('', () => i++ % 27),
    );
    expect(seen.size).toBe(15);
  });
});
