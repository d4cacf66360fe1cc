import { recentTrouble } from './controller-process.ts';

describe('recentTrouble', () => {
  it('lists distinct warnings and errors, latest last, with counts; info lines are left out', () => {
    const lines = [
      { level: 50, cell: 'cell-1', msg: 'reconcile failed', err: { message: 'ECONNREFUSED' } },
      { level: 30, msg: 'rebalance progress' },
      { level: 40, cell: 'cell-1', msg: 'list/watch failed' },
      { level: 50, cell: 'cell-1', msg: 'reconcile failed', err: { message: 'ECONNREFUSED' } },
      { level: 50, msg: 'status write failed', err: { message: 'conflict' } },
    ];
    expect(recentTrouble(lines)).toEqual([
      '1× cell-1: list/watch failed',
      '2× cell-1: reconcile failed: ECONNREFUSED',
      '1× status write failed: conflict',
    ]);
    expect(recentTrouble(lines, 1)).toEqual(['1× status write failed: conflict']);
    expect(recentTrouble([{ level: 30, msg: 'fine' }])).toEqual([]);
  });
});
