import { HashingError, HashingErrorCode } from './errors';

/** What is hashed to place an object: the whole `namespace/name`, or the namespace alone. */
export type ShardBy = 'name' | 'namespace';

/** The namespace label that makes one namespace shard by namespace whatever the CellSet says. */
export const SHARD_BY_LABEL = 'cellfed.io/shard-by';

/** Identifies an object; `namespace` is empty or absent for cluster-scoped objects. */
export interface ObjectRef {
  readonly namespace?: string | undefined;
  readonly name: string;
}

/**
 * The key an object is placed by, computable from a request alone (a GET by name routes without reading the
 * object):
 * - `shardBy: 'name'` → `namespace/name` (so the Deployment and the Service called `web` in one namespace
 *   share a cell); cluster-scoped objects → `/name`.
 * - `shardBy: 'namespace'` → `namespace` (a whole namespace in one cell); cluster-scoped objects have no
 *   namespace and fall back to `/name`.
 *
 * @throws {@link HashingError} `CELLFED_INVALID_OBJECT_REF` when the name is empty.
 */
export function objectKey(ref: ObjectRef, shardBy: ShardBy = 'name'): string {
  if (typeof ref.name !== 'string' || ref.name.length === 0) {
    throw new HashingError(
      HashingErrorCode.InvalidObjectRef,
      'an object needs a non-empty name to be placed',
    );
  }
  const namespace = ref.namespace ?? '';
  if (shardBy === 'namespace' && namespace !== '') return namespace;
  return `${namespace}/${ref.name}`;
}

/**
 * The effective `shardBy` for objects of one namespace: the namespace's `cellfed.io/shard-by` label when it
 * is `name` or `namespace`, otherwise the CellSet's default. A label with any other value is ignored (check
 * it with {@link isShardBy} to report it); it never breaks routing.
 */
export function shardByForNamespace(
  defaultShardBy: ShardBy,
  namespaceLabels: Readonly<Record<string, string>> | undefined,
): ShardBy {
  const value = namespaceLabels?.[SHARD_BY_LABEL];
  return isShardBy(value) ? value : defaultShardBy;
}

/** Whether `value` is a valid {@link ShardBy}. */
export function isShardBy(value: unknown): value is ShardBy {
  return value === 'name' || value === 'namespace';
}
