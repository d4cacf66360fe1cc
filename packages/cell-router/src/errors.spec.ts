import { CodedError } from '@cellfed/controller-kit/errors';

import { CellListError, CellTokenError, RouterError, RouterErrorCode } from './errors.ts';

describe('router errors', () => {
  it('carry stable codes under the shared base', () => {
    const token = new CellTokenError('malformed token');
    expect(token).toBeInstanceOf(RouterError);
    expect(token).toBeInstanceOf(CodedError);
    expect(token.code).toBe(RouterErrorCode.CellToken);
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
