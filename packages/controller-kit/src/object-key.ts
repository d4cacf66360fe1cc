import { ControllerKitError, ControllerKitErrorCode } from './errors.ts';

/**
 * Which object in which cell: what a work-queue key names. As multicluster-runtime puts the cluster in the
 * request, the cell is part of the key, so one queue serves every cell and single-cell code only reads it.
 */
export interface CellObjectKey {
  cell: string;
  /** Empty for cluster-scoped objects. */
  namespace: string;
  name: string;
}

/** `cell/namespace/name`; `cell//name` for a cluster-scoped object. Cell ids, namespaces and names hold no `/`. */
export function formatKey(key: CellObjectKey): string {
  return `${key.cell}/${key.namespace}/${key.name}`;
}

/** Inverse of {@link formatKey}. */
export function parseKey(key: string): CellObjectKey {
  const first = key.indexOf('/');
  const second = key.indexOf('/', first + 1);
  if (first <= 0 || second < 0 || second === key.length - 1 || key.indexOf('/', second + 1) >= 0) {
    throw new ControllerKitError(
      ControllerKitErrorCode.InvalidKey,
      `work-queue key "${key}" is not cell/namespace/name`,
    );
  }
  return { cell: key.slice(0, first), namespace: key.slice(first + 1, second), name: key.slice(second + 1) };
}

/** The key of an object as it appears in a list or watch of `cell`. */
export function keyOf(cell: string, object: { metadata?: { namespace?: string; name?: string } }): string {
  return formatKey({ cell, namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '' });
}
