import { MIRROR_HASH_ANNOTATION } from '@cellfed/api';
import { isNotFound, type KubeClient } from '@cellfed/controller-kit';
import { APPLY_PATCH, METADATA, type KubeObject } from '@cellfed/federation';

import { contentHash, MIRROR_FIELD_MANAGER } from '../mirror-marks.ts';

/**
 * Server-side applies `object` at `path` in a cell with a hash of `content` as its
 * {@link MIRROR_HASH_ANNOTATION}, unless the cell's object already carries that hash (one metadata GET).
 * Answers whether it wrote.
 */
export async function applyIfChanged(
  cell: Pick<KubeClient, 'request'>,
  path: string,
  object: KubeObject,
  content: unknown,
  signal: AbortSignal,
): Promise<boolean> {
  const hash = contentHash(content);
  const current = await cell
    .request<KubeObject>('GET', path, { accept: METADATA, signal })
    .catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
  if (current?.metadata.annotations?.[MIRROR_HASH_ANNOTATION] === hash) return false;
  const annotations = { ...object.metadata.annotations, [MIRROR_HASH_ANNOTATION]: hash };
  await cell.request('PATCH', path, {
    body: JSON.stringify({ ...object, metadata: { ...object.metadata, annotations } }),
    contentType: APPLY_PATCH,
    query: { fieldManager: MIRROR_FIELD_MANAGER, force: true },
    signal,
  });
  return true;
}
