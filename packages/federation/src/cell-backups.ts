import {
  BackedUpObjectSchema,
  BACKUP_CELL_LABEL,
  BACKUP_FORMAT_ANNOTATION,
  BACKUP_FORMAT_JSON,
  BACKUP_SOURCE_ANNOTATION,
  CELL_BACKUPS,
  CELL_BACKUP_API_VERSION,
  CELL_BACKUP_KIND,
  CELL_BACKUP_NAMESPACE,
  PRIMARY_CELL_LABEL,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
  type CellBackup,
} from '@cellfed/api';
import { hash64Hex } from '@cellfed/hashing';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

import type { KubeObject } from './kube-object.ts';
import { formatObjectKey, type CellularObjectRef } from './object-ref.ts';
import { resourcePath } from './resource-path.ts';

/**
 * The name of an object's CellBackup: `<resource>-<160 bits of the SHA-256 of its key>`, always a valid name
 * however long the object's namespace and name, and computable from the request alone so the router can read
 * it. Tenants choose keys, so the hash must resist a chosen collision: with a 64-bit non-cryptographic hash a
 * tenant could name an object of its own so that its backup took another tenant's object's name, and the
 * backup controller would overwrite or delete that backup. Every write and delete also checks whose key a
 * backup holds ({@link holdsKey}).
 */
export function cellBackupName(ref: CellularObjectRef): string {
  const digest = bytesToHex(sha256(utf8ToBytes(formatObjectKey(ref))));
  return `${ref.resource.resource}-${digest.slice(0, 40)}`;
}

/**
 * The name backups had before {@link cellBackupName} (a 64-bit XXH64 of the key): read, for their key only,
 * until the backup controller has written each anew under its current name and deleted the old one.
 */
export function legacyCellBackupName(ref: CellularObjectRef): string {
  return `${ref.resource.resource}-${hash64Hex(formatObjectKey(ref))}`;
}

/**
 * Whether a CellBackup (its metadata) holds the object `ref`: the key its annotation names. A backup at an
 * object's name that holds another key (made by hand, or a legacy name's collision) is never written over,
 * deleted or promoted for it.
 */
export function holdsKey(
  metadata: { annotations?: Record<string, string> },
  ref: CellularObjectRef,
): boolean {
  return metadata.annotations?.[BACKUP_SOURCE_ANNOTATION] === formatObjectKey(ref);
}

/** The path of the CellBackup `name` in its cell (every one sits in CELL_BACKUP_NAMESPACE); none: their collection. */
export function cellBackupPath(name?: string): string {
  return resourcePath({ ...CELL_BACKUPS, namespaced: true }, CELL_BACKUP_NAMESPACE, name);
}

/**
 * The CellBackup of `object` (read in `primaryCell`) to keep in `backupCell`: the object as its JSON in
 * `spec.data`, named in `spec.source` (with its kind and uid) and in the annotations.
 */
export function cellBackupOf(
  object: Readonly<KubeObject>,
  ref: CellularObjectRef,
  cells: { primaryCell: string; backupCell: string },
): CellBackup {
  const { resourceVersion, uid } = object.metadata;
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
        [BACKUP_FORMAT_ANNOTATION]: BACKUP_FORMAT_JSON,
      },
    },
    spec: {
      source: {
        ...ref.resource,
        namespace: ref.namespace,
        name: ref.name,
        kind: object.kind,
        ...(uid ? { uid } : {}),
      },
      data: JSON.stringify(object),
    },
  };
}

/**
 * The object a CellBackup holds, from either form (`spec.data`, or the earlier `spec.object`); undefined when
 * it holds none, or anything but an object with an apiVersion, a kind and metadata.
 */
export function backedUpObject(backup: {
  spec?: { data?: unknown; object?: unknown };
}): KubeObject | undefined {
  const { data, object } = backup.spec ?? {};
  let held: unknown = object;
  if (typeof data === 'string') {
    try {
      held = JSON.parse(data);
    } catch {
      return undefined;
    }
  }
  const parsed = BackedUpObjectSchema.safeParse(held);
  return parsed.success ? (parsed.data as KubeObject) : undefined;
}

/** Whether a backup's metadata says it is of the current form; an earlier one is written anew. */
export function isCurrentBackupForm(metadata: { annotations?: Record<string, string> }): boolean {
  return metadata.annotations?.[BACKUP_FORMAT_ANNOTATION] === BACKUP_FORMAT_JSON;
}
