import { createHash } from 'node:crypto';

import { MIRRORED_FROM_CONTROL_PLANE } from '@cellfed/api';

/** The value of the mirror's label (@cellfed/api's MIRRORED_LABEL): where a mirrored object comes from. */
export const MIRRORED_VALUE = MIRRORED_FROM_CONTROL_PLANE;
export const MIRROR_FIELD_MANAGER = 'cellfed-mirror';

/** The `cellfed.io/mirror-hash` value for what the mirror applies (@cellfed/api's MIRROR_HASH_ANNOTATION). */
export function contentHash(content: unknown): string {
  return createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 16);
}
