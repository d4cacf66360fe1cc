import { createHash } from 'node:crypto';

/** The value of the mirror's label (@cellfed/api's MIRRORED_LABEL): where a mirrored object comes from. */
export const MIRRORED_VALUE = 'control-plane';
export const MIRROR_FIELD_MANAGER = 'cellfed-mirror';

/** The `cellfed.io/mirror-hash` value for what the mirror applies (@cellfed/api's MIRROR_HASH_ANNOTATION). */
export function contentHash(content: unknown): string {
  return createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 16);
}
