import { randomInt } from 'node:crypto';

// kube-apiserver's SimpleNameGenerator: five characters from an alphabet without vowels or look-alikes,
// the prefix cut so the whole name fits 63 characters.
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const RANDOM_LENGTH = 5;
const MAX_NAME_LENGTH = 63;
const MAX_PREFIX_LENGTH = MAX_NAME_LENGTH - RANDOM_LENGTH;

/** A name for `generateName`, as the apiserver would make it; the router picks it so it can route. */
export function generateName(prefix: string, random: (max: number) => number = randomInt): string {
  let suffix = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) suffix += ALPHABET[random(ALPHABET.length)];
  return `${prefix.slice(0, MAX_PREFIX_LENGTH)}${suffix}`;
}
