import { CellSetError, parseCellSetSpec, type CellSetSpecInput } from '@cellfed/api';
import { CellsCliError, CellsCliErrorCode } from './errors.ts';

/** A change `kubectl cells` makes to the CellSet's cells. */
export type CellEdit =
  | { kind: 'add'; id: string; weight: number; secret?: { namespace?: string; name: string } }
  | { kind: 'drain'; id: string }
  | { kind: 'down'; id: string }
  | { kind: 'rejoin'; id: string }
  | { kind: 'weight'; id: string; weight: number };

type CellInput = CellSetSpecInput['cells'][number];

/**
 * The CellSet's `spec.cells` after `edit`, checked as the controllers will check it (the same zod schema):
 * - add: a new cell, Joining, its kubeconfig Secret `<id>-kubeconfig` unless given (without a namespace:
 *   each component reads its own Secret of that name, in its credentials namespace);
 * - drain: a Normal (or Joining) cell becomes Draining: its objects move out, then it leaves the CellSet;
 * - down: the cell failed: its keys are served from their backups, which are promoted;
 * - rejoin: a Down cell comes back as Joining; its stale copies are deleted before anything moves in;
 * - weight: a Normal cell's new weight, with `previousWeight` saying where objects are until they have moved.
 * Throws one readable line when the edit does not apply or the result would be invalid.
 */
export function editCells(cells: readonly CellInput[], edit: CellEdit): CellInput[] {
  const current = cells.find((cell) => cell.id === edit.id);
  const stateTo = (state: 'Draining' | 'Down' | 'Joining', allowed: readonly string[]) => {
    if (!current)
      throw new CellsCliError(CellsCliErrorCode.InvalidChange, `cell ${edit.id} is not in the CellSet`);
    const from = current.state ?? 'Normal';
    if (!allowed.includes(from))
      throw new CellsCliError(
        CellsCliErrorCode.InvalidChange,
        `cell ${edit.id} is ${from}: ${edit.kind} applies to a ${allowed.join(' or ')} cell`,
      );
    return cells.map((cell) => (cell.id === edit.id ? { ...cell, state } : cell));
  };
  let next: CellInput[];
  switch (edit.kind) {
    case 'add':
      if (current)
        throw new CellsCliError(
          CellsCliErrorCode.InvalidChange,
          `cell ${edit.id} is already in the CellSet (${current.state ?? 'Normal'})`,
        );
      next = [
        ...cells,
        {
          id: edit.id,
          state: 'Joining',
          weight: edit.weight,
          kubeconfigSecretRef: edit.secret ?? { name: `${edit.id}-kubeconfig` },
        },
      ];
      break;
    case 'drain':
      next = stateTo('Draining', ['Normal', 'Joining']);
      break;
    case 'down':
      next = stateTo('Down', ['Normal', 'Joining', 'Draining']);
      break;
    case 'rejoin':
      next = stateTo('Joining', ['Down']);
      break;
    case 'weight': {
      if (!current)
        throw new CellsCliError(CellsCliErrorCode.InvalidChange, `cell ${edit.id} is not in the CellSet`);
      const state = current.state ?? 'Normal';
      const weight = current.weight ?? 1;
      if (state !== 'Normal')
        throw new CellsCliError(
          CellsCliErrorCode.InvalidChange,
          `cell ${edit.id} is ${state}: only a Normal cell changes weight`,
        );
      if (current.previousWeight !== undefined)
        throw new CellsCliError(
          CellsCliErrorCode.InvalidChange,
          `cell ${edit.id} is still changing weight (${current.previousWeight} → ${weight}); wait for that rebalance to finish`,
        );
      if (edit.weight === weight)
        throw new CellsCliError(CellsCliErrorCode.InvalidChange, `cell ${edit.id} already weighs ${weight}`);
      next = cells.map((cell) =>
        cell.id === edit.id ? { ...cell, weight: edit.weight, previousWeight: weight } : cell,
      );
      break;
    }
  }
  try {
    parseCellSetSpec({ cells: next });
  } catch (error) {
    const issues =
      error instanceof CellSetError ? error.issues.map((issue) => issue.message).join('; ') : String(error);
    throw new CellsCliError(CellsCliErrorCode.InvalidChange, `the CellSet would be invalid: ${issues}`, {
      cause: error,
    });
  }
  return next;
}

/** Whether the edit has run its course, from the CellSet as it is now: the cell Normal, or gone after a drain. */
export function editSettled(cells: readonly CellInput[], edit: CellEdit): boolean {
  const cell = cells.find((candidate) => candidate.id === edit.id);
  if (edit.kind === 'drain') return cell === undefined;
  if (edit.kind === 'down') return cell?.state === 'Down';
  if (edit.kind === 'weight') return cell?.previousWeight === undefined;
  return cell?.state === 'Normal';
}

/** One line of progress: a bar, moved of to-move, and the ETA the rebalance controller reports. */
export function progressLine(
  objects: { moved?: number; toMove?: number } | undefined,
  etaSeconds?: number,
): string {
  const moved = objects?.moved ?? 0;
  const toMove = objects?.toMove ?? 0;
  const width = 20;
  const filled = toMove > 0 ? Math.min(width, Math.round((moved / toMove) * width)) : 0;
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
  const eta = etaSeconds !== undefined ? `, about ${etaSeconds} s left` : '';
  return toMove > 0
    ? `${bar} ${moved}/${toMove} objects moved${eta}`
    : `${bar} waiting for the rebalance to start`;
}
