import { CELL_BACKUP_NAMESPACE, cellBackupCrd } from '@cellfed/api';
import { errorMessage, sleep, type Clock, type EngagedCell, type KubeClient } from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import { APPLY_PATCH } from '@cellfed/federation';

import { FIELD_MANAGER } from './backup-reconciler.ts';

/**
 * Makes sure a cell can hold backups: the CellBackup CRD, established, and the reserved namespace. Applied
 * with server-side apply, so it is the same whether this is the first time or the hundredth.
 */
async function prepareCell(client: Pick<KubeClient, 'request'>, signal: AbortSignal): Promise<void> {
  const crd = cellBackupCrd();
  const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
  await client.request('PATCH', crdPath, {
    query: { fieldManager: FIELD_MANAGER, force: true },
    body: crd,
    contentType: APPLY_PATCH,
    signal,
  });
  await client.request('PATCH', `/api/v1/namespaces/${CELL_BACKUP_NAMESPACE}`, {
    query: { fieldManager: FIELD_MANAGER, force: true },
    body: {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: CELL_BACKUP_NAMESPACE, labels: { 'app.kubernetes.io/part-of': 'cellfed' } },
    },
    contentType: APPLY_PATCH,
    signal,
  });
}

/**
 * Prepares an engaged cell, retrying with backoff while it is unreachable, then calls `ready`. Stops when
 * the cell is disengaged.
 */
export async function prepareWhenReachable(
  cell: EngagedCell,
  log: Logger,
  clock: Clock,
  ready: () => void,
): Promise<void> {
  for (let attempt = 0; !cell.signal.aborted; attempt++) {
    try {
      await prepareCell(cell.client, cell.signal);
      log.info({ cell: cell.id, namespace: CELL_BACKUP_NAMESPACE }, 'cell ready for backups');
      ready();
      return;
    } catch (error) {
      if (cell.signal.aborted) return;
      log.warn(
        { cell: cell.id, err: errorMessage(error), attempt },
        'preparing the cell for backups failed; retrying',
      );
      await sleep(clock, Math.min(30_000, 500 * 2 ** attempt), cell.signal);
    }
  }
}
