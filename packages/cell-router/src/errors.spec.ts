import { CodedError } from '@cellfed/controller-kit/errors';

import {
  CellListError,
  CellTokenError,
  OneCellVersionError,
  RouterError,
  RouterErrorCode,
} from './errors.ts';

describe('router errors', () => {
  it('carry stable codes under the shared base, a version of one cell still being a token error', () => {
    const oneCell = new OneCellVersionError('resourceVersion "7" is one cell’s');
    expect(oneCell).toBeInstanceOf(CellTokenError);
    expect(oneCell).toBeInstanceOf(RouterError);
    expect(oneCell).toBeInstanceOf(CodedError);
    expect(oneCell.code).toBe('CELLFED_ROUTER_ONE_CELL_VERSION');
    expect(new CellTokenError('malformed token').code).toBe(RouterErrorCode.CellToken);
    expect(Object.values(RouterErrorCode).every((code) => code.startsWith('CELLFED_ROUTER_'))).toBe(true);
  });

  it('keeps a failed cell’s answer as the Status its client gets, naming the cell', () => {
    const error = new CellListError(
      'cell-2',
      403,
      JSON.stringify({ kind: 'Status', code: 403, reason: 'Forbidden', message: 'no' }),
    );
    expect(error.code).toBe(RouterErrorCode.CellList);
    expect(error.status.code).toBe(403);
    expect(error.message).toContain('cell-2');
  });
});
