import { safeParseCellSet } from '@cellfed/api';
import { table } from './table.ts';
import { CellsCliError, CellsCliErrorCode } from './errors.ts';

/** The parts of CellSet.status the rebalance controller writes that `status` shows. */
interface CellSetStatus {
  phase?: string;
  objects?: { total?: number; moved?: number; toMove?: number; pending?: number; inFlight?: number };
  cells?: { id: string; objects?: number }[];
  ratePerSecond?: number;
  etaSeconds?: number;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

/** `kubectl cells status`: the cells (state, weight, objects), then the rebalance and any condition that is not well. */
export function renderStatus(cellSet: unknown): string {
  const parsed = safeParseCellSet(cellSet);
  if (!parsed.success)
    throw new CellsCliError(
      CellsCliErrorCode.InvalidCellSet,
      `the CellSet is invalid: ${parsed.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
    );
  const status = ((cellSet as { status?: CellSetStatus }).status ?? {}) as CellSetStatus;
  const counts = new Map((status.cells ?? []).map((cell) => [cell.id, cell.objects]));
  const cells = table(
    ['cell', 'state', 'weight', 'objects'],
    parsed.data.spec.cells.map((cell) => [
      cell.id,
      cell.state,
      String(cell.weight),
      String(counts.get(cell.id) ?? '-'),
    ]),
  );
  const objects = status.objects ?? {};
  const lines = [cells, ''];
  lines.push(`rebalance: ${status.phase ?? 'unknown'}`);
  if (objects.toMove)
    lines.push(
      `  moved ${objects.moved ?? 0}/${objects.toMove} (${objects.inFlight ?? 0} in flight)` +
        (status.ratePerSecond ? `, ${status.ratePerSecond}/s` : '') +
        (status.etaSeconds !== undefined ? `, about ${status.etaSeconds} s left` : ''),
    );
  for (const condition of status.conditions ?? []) {
    const troubled =
      (condition.type === 'Blocked' && condition.status === 'True') ||
      (condition.type === 'Valid' && condition.status === 'False');
    if (troubled)
      lines.push(`  ${condition.type}: ${condition.reason ?? ''} ${condition.message ?? ''}`.trimEnd());
  }
  return lines.join('\n');
}
