import { keyCodec, type Key } from '@cellfed/federation';

/** Names the router control plane in informer keys, logs and metrics. */
export const CONTROL_PLANE = 'control-plane';

/**
 * Which object in which cell: what a work-queue key names. As multicluster-runtime puts the cluster in the
 * request, the cell is part of the key, so one queue serves every cell and single-cell code only reads it.
 * `cell/namespace/name`; `cell//name` for a cluster-scoped object.
 */
export const CELL_OBJECT_KEYS = keyCodec(['cell', 'namespace', 'name'], { mayBeEmpty: ['namespace'] });

/** A key that names one cell: what the cell pool, the mirror and the Down paths work on. */
export const CELL_KEYS = keyCodec(['cell']);
export type CellKey = Key<'cell'>;

/** A key of {@link CELL_OBJECT_KEYS}; `namespace` is empty for cluster-scoped objects. */
export type CellObjectKey = Key<'cell' | 'namespace' | 'name'>;

export const formatKey = (key: CellObjectKey): string => CELL_OBJECT_KEYS.format(key);
export const parseKey = (text: string): CellObjectKey => CELL_OBJECT_KEYS.parse(text);

/** The key of an object as it appears in a list or watch of `cell`. */
export function keyOf(cell: string, object: { metadata?: { namespace?: string; name?: string } }): string {
  return formatKey({ cell, namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '' });
}

/**
 * The key to look an object up by in `cell`'s cache, or undefined for names no object has (an empty name,
 * or a `/` that a client's request or a pod template may carry: the apiserver does not validate the names a
 * volume refers to): a lookup by it finds nothing, never throws.
 */
export function lookupKey(cell: string, namespace: string, name: string): string | undefined {
  return name === '' || name.includes('/') || namespace.includes('/')
    ? undefined
    : formatKey({ cell, namespace, name });
}

/** The key of a namespace in an informer of the control plane's namespaces (see {@link lookupKey}). */
export function controlPlaneNamespaceKey(name: string): string | undefined {
  return lookupKey(CONTROL_PLANE, '', name);
}
