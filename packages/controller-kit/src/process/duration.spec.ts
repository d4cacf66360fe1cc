import { parseDuration } from './duration.ts';

describe('parseDuration', () => {
  it.each([
    ['12h', 43_200_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
    ['1.5s', 1500],
    ['12', undefined],
    ['h', undefined],
    ['5d', undefined],
  ])('%s → %s', (text, ms) => expect(parseDuration(text)).toBe(ms));
});
