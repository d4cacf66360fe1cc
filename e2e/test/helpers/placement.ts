import {
  BACKUP_CELL_LABEL,
  BACKUP_SOURCE_ANNOTATION,
  PRIMARY_CELL_LABEL,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
  parseCellSetSpec,
  type CellSetSpecInput,
} from '@cellfed/api';
import { ApiError, type KubeClient } from '@cellfed/controller-kit';
import { MIGRATED, REBALANCE_STATUS_LABEL, RoutingTable } from '@cellfed/hashing';
import { METADATA_LIST, type KubeList, type KubeObject } from '@cellfed/federation';

import { SEQ, deploymentsIn, type startWriter } from './deployments.ts';

// Where the Deployments of a test namespace are, and their backups, read from every cell directly: what the
// rebalance, backup and proof suites check after the fact.

/** Where each Deployment of `namespace` is, read from every cell directly; leftover `migrated` copies apart. */
export async function placement(cells: ReadonlyMap<string, KubeClient>, namespace: string) {
  const primaries = new Map<string, string[]>();
  const leftovers: string[] = [];
  for (const [cell, client] of cells) {
    for (const [name, metadata] of await deploymentsIn(client, namespace)) {
      if (metadata.labels?.[REBALANCE_STATUS_LABEL] === MIGRATED) leftovers.push(`${cell}/${name}`);
      else primaries.set(name, [...(primaries.get(name) ?? []), cell]);
    }
  }
  return { primaries, leftovers };
}

/**
 * The objects not exactly once, in the cell the ring of `spec` names (none when all is well), and how many
 * objects are anywhere at all.
 */
export async function misplaced(
  cells: ReadonlyMap<string, KubeClient>,
  namespace: string,
  names: readonly string[],
  spec: CellSetSpecInput,
) {
  const table = RoutingTable.fromCellSet(parseCellSetSpec(spec));
  const { primaries } = await placement(cells, namespace);
  const wrong = names
    .map((name) => ({
      name,
      in: primaries.get(name),
      ring: table.route(table.keyOf({ namespace, name })).oldCell,
    }))
    .filter((object) => object.in?.length !== 1 || object.in[0] !== object.ring);
  return { wrong, found: primaries.size };
}

/**
 * The acknowledged writes the router does not serve now: the object shows an older write than the last one
 * acknowledged (lost), or one never attempted (invented). Empty when no write was lost.
 */
export async function lostWrites(
  routed: KubeClient,
  namespace: string,
  writer: ReturnType<typeof startWriter>,
) {
  const served = await deploymentsIn(routed, namespace);
  return [...writer.acknowledged]
    .map(([name, acks]) => ({
      name,
      acknowledged: acks.at(-1)!.seq,
      attempted: writer.attempted.get(name)!,
      served: Number(served.get(name)?.annotations?.[SEQ] ?? 0),
    }))
    .filter((write) => write.served < write.acknowledged || write.served > write.attempted);
}

const CELL_BACKUPS = '/apis/cells.cellfed.io/v1alpha1/namespaces/cellfed-backups/cellbackups';
const isStatus = (error: unknown, code: number) => error instanceof ApiError && error.statusCode === code;

/** The CellBackups a cell holds: source key → metadata. */
export async function backupsIn(client: KubeClient): Promise<Map<string, KubeObject['metadata']>> {
  const list = await client
    .request<KubeList>('GET', CELL_BACKUPS, { accept: METADATA_LIST })
    .catch((error: unknown) => {
      // Not there yet: the CRD is new (404), or its storage is still starting (429).
      if (isStatus(error, 404) || isStatus(error, 429)) return { metadata: {}, items: [] } as KubeList;
      throw error;
    });
  return new Map(
    (list.items ?? []).map((item) => [
      item.metadata.annotations?.[BACKUP_SOURCE_ANNOTATION] ?? '',
      item.metadata,
    ]),
  );
}

/**
 * Whether every Deployment of `namespace` (`count` of them, in the `live` cells) has exactly one backup, in
 * the cell the ring names beside the cell that holds it, holding the version that cell serves; undefined
 * while not.
 */
export async function everyObjectBackedUp(
  cells: ReadonlyMap<string, KubeClient>,
  {
    live,
    namespace,
    table,
    count,
  }: { live: readonly string[]; namespace: string; table: RoutingTable; count: number },
): Promise<true | undefined> {
  const objects = new Map<string, { cell: string; version: string }>();
  const backups = new Map<string, { cell: string; labels: Record<string, string>; version: string }[]>();
  for (const id of live) {
    const client = cells.get(id)!;
    for (const [name, metadata] of await deploymentsIn(client, namespace)) {
      // An old copy left after a move is not the object and has no backup of its own.
      if (metadata.labels?.[REBALANCE_STATUS_LABEL] === MIGRATED) continue;
      objects.set(name, { cell: id, version: metadata.resourceVersion ?? '' });
    }
    for (const [key, metadata] of await backupsIn(client)) {
      if (!key.startsWith(`deployments.apps/${namespace}/`)) continue;
      const name = key.split('/')[2]!;
      backups.set(name, [
        ...(backups.get(name) ?? []),
        {
          cell: id,
          labels: metadata.labels ?? {},
          version: metadata.annotations?.[SOURCE_RESOURCE_VERSION_ANNOTATION] ?? '',
        },
      ]);
    }
  }
  if (objects.size !== count) return undefined;
  for (const [name, object] of objects) {
    const held = backups.get(name) ?? [];
    const backupCell = table.backupOf(table.keyOf({ namespace, name }), object.cell);
    if (held.length !== 1) return undefined;
    const [backup] = held;
    if (
      backup!.cell !== backupCell ||
      backup!.labels[BACKUP_CELL_LABEL] !== backupCell ||
      backup!.labels[PRIMARY_CELL_LABEL] !== object.cell ||
      backup!.version !== object.version
    )
      return undefined;
  }
  return true;
}
