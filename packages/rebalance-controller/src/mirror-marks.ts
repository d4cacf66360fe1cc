import { createHash } from 'node:crypto';

/** On every object the mirror put in a cell: it may update it, and delete it when the control plane's goes. */
export const MIRRORED_LABEL = 'cellfed.io/mirrored-from';
export const MIRRORED_VALUE = 'control-plane';
/** On mirrored CRDs and shared objects: a hash of the content applied, so an unchanged one is not applied again. */
export const MIRROR_HASH_ANNOTATION = 'cellfed.io/mirror-hash';
export const MIRROR_FIELD_MANAGER = 'cellfed-mirror';

/** The {@link MIRROR_HASH_ANNOTATION} value for what the mirror applies. */
export function contentHash(content: unknown): string {
  return createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 16);
}
