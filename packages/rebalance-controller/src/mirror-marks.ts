import { createHash } from 'node:crypto';

import { MIRRORED_FROM_CONTROL_PLANE } from '@cellfed/api';

/** The value of the mirror's label (@cellfed/api's MIRRORED_LABEL): where a mirrored object comes from. */
export const MIRRORED_VALUE = MIRRORED_FROM_CONTROL_PLANE;
export const MIRROR_FIELD_MANAGER = 'cellfed-mirror';

/**
 * The `cellfed.io/mirror-hash` value for what the mirror applies (@cellfed/api's MIRROR_HASH_ANNOTATION). Keys
 * are hashed in sorted order: the same object read from a list and from a watch has its fields in another
 * order (`kind` first, or added last), and must hash the same.
 */
export function contentHash(content: unknown): string {
  return createHash('sha256').update(JSON.stringify(content, sortedKeys)).digest('hex').slice(0, 16);
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
