import {
  BACKUP_CELL_LABEL,
  PRIMARY_CELL_LABEL,
  PROMOTED_FROM_ANNOTATION,
  PROMOTION_REQUESTED_ANNOTATION,
} from '@cellfed/api';
import { isNotFound, type KubeClient } from '@cellfed/controller-kit';
import {
  METADATA,
  backedUpObject,
  cellBackupName,
  cellBackupPath,
  holdsKey,
  legacyCellBackupName,
  type CellularObjectRef,
  type KubeObject,
} from '@cellfed/federation';

import { requestObjectPath } from '../request/object-path.ts';
import type { ResourceRequestInfo } from '../request/request-info.ts';

/** What the cell that took over a Down cell's key holds for it. */
export type FailoverState =
  /** The real object is there (promoted, or created since): the request goes to the cell as usual. */
  | { readonly kind: 'object' }
  /**
   * The real object is there, but its promotion is not committed (PROMOTED_FROM_ANNOTATION): reads go to the
   * cell, writes wait, as they do for a backup.
   */
  | { readonly kind: 'promoting' }
  /**
   * Only the object's backup, not promoted yet: reads are served from it, writes wait (`promotionRequested`:
   * a router already asked for it to be promoted first).
   */
  | {
      readonly kind: 'backup';
      readonly object: KubeObject;
      readonly promotionRequested: boolean;
      /** The CellBackup's name: its current one, or the legacy one it still has. */
      readonly name: string;
    }
  /** The backup is there but holds no object of this name that can be read: nothing to serve or promote. */
  | { readonly kind: 'unreadable' }
  /** Neither: the object does not exist (or was never backed up); the cell answers as usual. */
  | { readonly kind: 'none' }
  /** The caller may not read the object in that cell: the cell's own answer, relayed. */
  | { readonly kind: 'refused'; readonly code: number; readonly body: string };

/**
 * For a key whose cell is Down (see `RoutingTable.failedOverFrom`): whether the cell that now owns it has the
 * real object yet, or only its CellBackup. The real object is looked for as the caller, so the cell's RBAC
 * decides whether the caller may read it before anything is served from the backup (read with the router's
 * own identity; callers have no rights on CellBackups).
 */
export async function failoverState(
  client: Pick<KubeClient, 'raw' | 'request'>,
  info: ResourceRequestInfo,
  down: string,
  cell: string,
  impersonation: Record<string, string | string[]>,
  signal?: AbortSignal,
): Promise<FailoverState> {
  const answer = await client.raw('GET', requestObjectPath(info, info.namespace, info.name), {
    headers: { ...impersonation, accept: METADATA },
    ...(signal ? { signal } : {}),
  });
  const text = await answer.body.text();
  if (answer.statusCode === 200) return promoting(text) ? { kind: 'promoting' } : { kind: 'object' };
  if (answer.statusCode !== 404) return { kind: 'refused', code: answer.statusCode, body: text };
  const ref = refOf(info);
  // A backup not yet written anew under its current name is read under its legacy one, if it holds this key.
  const backup =
    (await readBackup(client, cellBackupName(ref), signal)) ??
    (await readBackup(client, legacyCellBackupName(ref), signal).then((legacy) =>
      legacy && holdsKey(legacy.metadata, ref) ? legacy : undefined,
    ));
  const labels = backup?.metadata.labels;
  if (!backup || labels?.[PRIMARY_CELL_LABEL] !== down || labels[BACKUP_CELL_LABEL] !== cell)
    return { kind: 'none' };
  // A backup at this name that holds another object (made by hand: names are a cryptographic hash of the key).
  if (!holdsKey(backup.metadata, ref)) return { kind: 'unreadable' };
  const object = backedUpObject(backup);
  if (object?.metadata.name !== info.name || (object.metadata.namespace ?? '') !== info.namespace)
    return { kind: 'unreadable' };
  const promotionRequested = backup.metadata.annotations?.[PROMOTION_REQUESTED_ANNOTATION] !== undefined;
  return { kind: 'backup', object, promotionRequested, name: backup.metadata.name ?? cellBackupName(ref) };
}

type StoredBackup = KubeObject & { spec?: { data?: unknown; object?: unknown } };

function readBackup(
  client: Pick<KubeClient, 'request'>,
  name: string,
  signal: AbortSignal | undefined,
): Promise<StoredBackup | undefined> {
  return client
    .request<StoredBackup>('GET', cellBackupPath(name), signal ? { signal } : {})
    .catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
}

/** The object a request is about, as the backups name it. */
function refOf(info: ResourceRequestInfo): CellularObjectRef {
  return {
    resource: { group: info.apiGroup, version: info.apiVersion, resource: info.resource },
    namespace: info.namespace,
    name: info.name,
  };
}

/** Whether an object's metadata (as JSON) carries the mark of a promotion not committed yet. */
function promoting(text: string): boolean {
  if (!text.includes(PROMOTED_FROM_ANNOTATION)) return false;
  try {
    const object = JSON.parse(text) as { metadata?: { annotations?: Record<string, unknown> } };
    return typeof object.metadata?.annotations?.[PROMOTED_FROM_ANNOTATION] === 'string';
  } catch {
    return false; // not metadata the cell would send: nothing to tell by it
  }
}
