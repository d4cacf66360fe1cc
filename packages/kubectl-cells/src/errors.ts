import { CodedError } from '@cellfed/controller-kit/errors';

/** Stable codes for everything `kubectl cells` fails with; it prints one line, `kubectl cells: message`. */
export const CellsCliErrorCode = {
  /** The command line did not parse (exit 2, with the usage). */
  InvalidArguments: 'CELLFED_CELLS_INVALID_ARGUMENTS',
  /** The asked change does not apply to the CellSet as it is (a cell missing, in the wrong state, …). */
  InvalidChange: 'CELLFED_CELLS_INVALID_CHANGE',
  /** The CellSet in the control plane does not validate. */
  InvalidCellSet: 'CELLFED_CELLS_INVALID_CELLSET',
  /** `backup`: no backup of the object in the cells that would hold it, or one that cannot be read. */
  NoBackup: 'CELLFED_CELLS_NO_BACKUP',
  /** `backup`: the operator's kubeconfig has no context for a cell the backup may be in. */
  NoCellContext: 'CELLFED_CELLS_NO_CELL_CONTEXT',
  /** `backup`: the context used for a cell reaches another cell (what it holds is labelled so). */
  WrongCellContext: 'CELLFED_CELLS_WRONG_CELL_CONTEXT',
  /** `--wait` ran out of time before the change was done. */
  Timeout: 'CELLFED_CELLS_TIMEOUT',
} as const;

export type CellsCliErrorCode = (typeof CellsCliErrorCode)[keyof typeof CellsCliErrorCode];

export class CellsCliError extends CodedError<CellsCliErrorCode> {
  override readonly name: string = 'CellsCliError';
}
