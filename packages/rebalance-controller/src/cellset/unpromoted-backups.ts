import { PRIMARY_CELL_LABEL } from '@cellfed/api';
import { errorMessage, isNotFound, type KubeClient } from '@cellfed/controller-kit';
import { METADATA_LIST, cellBackupPath, type CellSetGeneration } from '@cellfed/federation';

import type { Gate } from './cellset-status.ts';

/**
 * Why a rebalance may not finish yet, or undefined when it may: a live cell still holds a CellBackup of a
 * Down cell's object, not promoted yet. The backup controller promotes such a backup in the cell that holds
 * it (the key's old cell) and the move follows; were the CellSet finished first, the ring would send the key
 * to a cell where neither it nor its backup is, and the router and the promotion would look for it there.
 * A cell that cannot be asked counts as holding one: nothing is finished on a guess.
 */
export async function unpromotedBackupsGate(
  plan: Pick<CellSetGeneration, 'spec' | 'liveCells'>,
  cell: (id: string) => Pick<KubeClient, 'request'> | undefined,
  signal: AbortSignal,
): Promise<Gate | undefined> {
  const down = plan.spec.cells.filter((entry) => entry.state === 'Down').map((entry) => entry.id);
  if (down.length === 0) return undefined;
  const labelSelector = `${PRIMARY_CELL_LABEL} in (${down.join(',')})`;
  const holding: string[] = [];
  for (const id of plan.liveCells) {
    const client = cell(id);
    if (!client) {
      holding.push(`${id} (not engaged)`);
      continue;
    }
    try {
      const list = await client.request<{ items?: unknown[] }>('GET', cellBackupPath(), {
        query: { labelSelector, limit: '1' },
        accept: METADATA_LIST,
        signal,
      });
      if ((list.items?.length ?? 0) > 0) holding.push(id);
    } catch (error) {
      if (signal.aborted) throw error;
      // No CellBackup resource in the cell: no backup was ever kept there.
      if (isNotFound(error)) continue;
      holding.push(`${id} (${errorMessage(error)})`);
    }
  }
  if (holding.length === 0) return undefined;
  return {
    reason: 'PromotionsPending',
    message: `backups of Down cell ${down.join(', ')} not promoted yet in: ${holding.join(', ')}; the rebalance finishes once the backup controller has promoted them and they have moved`,
  };
}
