import {
  BACKUP_CELL_LABEL,
  BACKUP_SOURCE_ANNOTATION,
  CELL_BACKUP_API_VERSION,
  CELL_BACKUP_KIND,
  CELL_BACKUP_NAMESPACE,
  PRIMARY_CELL_LABEL,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
  type CellBackup,
} from '@cellfed/api';
import { hash64Hex } from '@cellfed/hashing';

import type { KubeObject } from './kube-object.ts';
import { formatObjectKey, type CellularObjectRef } from './object-ref.ts';

/**
 * The name of an object's CellBackup: `<resource>-<64-bit hash of its key>`, always a valid name however
 * long the object's namespace and name, and computable from the request alone so the router can read it.
 */
export function cellBackupName(ref: CellularObjectRef): string {
  return `${ref.resource.resource}-${hash64Hex(formatObjectKey(ref))}`;
}

/** The CellBackup of `object` (read in `primaryCell`) to keep in `backupCell`. */
export function cellBackupOf(
  object: Readonly<KubeObject>,
  ref: CellularObjectRef,
  cells: { primaryCell: string; backupCell: string },
): CellBackup {
  const { resourceVersion } = object.metadata;
  return {
    apiVersion: CELL_BACKUP_API_VERSION,
    kind: CELL_BACKUP_KIND,
    metadata: {
      name: cellBackupName(ref),
      namespace: CELL_BACKUP_NAMESPACE,
      labels: { [BACKUP_CELL_LABEL]: cells.backupCell, [PRIMARY_CELL_LABEL]: cells.primaryCell },
      annotations: {
        [BACKUP_SOURCE_ANNOTATION]: formatObjectKey(ref),
        [SOURCE_RESOURCE_VERSION_ANNOTATION]: resourceVersion ?? '',
      },
    },
    spec: {
      source: { ...ref.resource, namespace: ref.namespace, name: ref.name },
      object: structuredClone(object) as CellBackup['spec']['object'],
    },
  };
}
