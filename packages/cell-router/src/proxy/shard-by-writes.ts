import { SHARD_BY_LABEL } from '@cellfed/api';
import { PROTOBUF } from '@cellfed/federation';

import { mediaType } from '../request/object-name.ts';
import { parseBody, writeShape } from '../views/cell-view.ts';

/** The label's JSON pointer, and the pointers of what holds it. */
const POINTERS = new Set([
  '',
  '/metadata',
  '/metadata/labels',
  `/metadata/labels/${SHARD_BY_LABEL.replace('/', '~1')}`,
]);

/**
 * Whether a write of a control-plane namespace sets, changes or removes its `cellfed.io/shard-by` label
 * (`stored`: the namespace's labels now). That label re-keys every object of the namespace, whoever wrote
 * it, and so moves them between cells: the router asks for a right of its own before such a write
 * (docs/routing.md). Decided on what the write means, and where that depends on more than the write says (a
 * JSON patch of the labels map, a map a merge patch replaces, protobuf), it counts as a change.
 */
export function changesShardBy(
  method: string | undefined,
  contentType: string | undefined,
  bytes: Buffer,
  stored: Readonly<Record<string, string>> | undefined,
): boolean {
  const shape = writeShape(method, contentType);
  if (!shape) return method === 'PATCH';
  if (mediaType(contentType) === PROTOBUF) return bytes.includes(SHARD_BY_LABEL);
  const body = parseBody(bytes, contentType);
  if (body === undefined) return false; // the control plane refuses it (400)
  const now = stored?.[SHARD_BY_LABEL];
  if (shape === 'json-patch')
    return (
      Array.isArray(body) &&
      body.some((operation: { path?: unknown; from?: unknown } | null) =>
        [operation?.path, operation?.from].some(
          (pointer) => typeof pointer === 'string' && POINTERS.has(pointer),
        ),
      )
    );
  const metadata = (body as { metadata?: unknown } | null)?.metadata;
  const labels = (metadata as { labels?: unknown } | null | undefined)?.labels;
  const replaced =
    metadata === null ||
    labels === null ||
    (shape === 'strategic-merge-patch' &&
      [metadata, labels].some((map) => typeof map === 'object' && map !== null && '$patch' in map));
  if (replaced) return now !== undefined;
  if (typeof labels !== 'object' || labels === null || !(SHARD_BY_LABEL in labels))
    // A whole object without it removes it (an update); a patch without it leaves it.
    return shape === 'object' && method === 'PUT' && now !== undefined;
  const value = (labels as Record<string, unknown>)[SHARD_BY_LABEL];
  return value !== now;
}
