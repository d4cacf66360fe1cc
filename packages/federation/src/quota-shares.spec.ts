import { parseQuantity } from './quantity.ts';
import { drawFrom, settleShares, type ShareHolder } from './quota-shares.ts';

const q = parseQuantity;
const amounts = (list: Record<string, string>) =>
  new Map(Object.entries(list).map(([name, value]) => [name, q(value)]));
const holder = (
  cell: string,
  share?: Record<string, string>,
  used?: Record<string, string>,
  drawnAt?: number,
): ShareHolder => ({
  cell,
  share: share && amounts(share),
  used: used && amounts(used),
  drawnAt,
});
const shown = (shares: ReadonlyMap<string, ReadonlyMap<string, bigint>>, name: string) =>
  [...shares.values()].map((share) => share.get(name));

describe('settleShares', () => {
  it('splits a new limit evenly in whole units, milli-CPUs for CPU, the odd steps to the first cells', () => {
    const { shares, retryAfterMs } = settleShares(
      amounts({ pods: '5', 'requests.cpu': '1', 'requests.memory': '1Gi' }),
      [holder('c'), holder('a'), holder('b')],
      0,
      10_000,
    );
    expect([...shares.keys()]).toEqual(['a', 'b', 'c']);
    expect(shown(shares, 'pods')).toEqual([q('2'), q('2'), q('1')]);
    expect(shown(shares, 'requests.cpu')).toEqual([q('334m'), q('333m'), q('333m')]);
    // Bytes in whole bytes; the shares add up to the limit exactly.
    const memory = shown(shares, 'requests.memory') as bigint[];
    expect(memory.reduce((a, b) => a + b)).toBe(q('1Gi'));
    expect(retryAfterMs).toBeUndefined();
  });

  it('gives a finer-than-a-step limit to the first cell', () => {
    const { shares } = settleShares(amounts({ pods: '1.5' }), [holder('a'), holder('b')], 0, 10_000);
    expect(shown(shares, 'pods')).toEqual([q('1.5'), q('0')]);
  });

  it('leaves shares within the limit as they are: a cell keeps what it drew', () => {
    const { shares } = settleShares(
      amounts({ pods: '4' }),
      [holder('a', { pods: '4' }, { pods: '3' }), holder('b', { pods: '0' }, { pods: '0' })],
      0,
      10_000,
    );
    expect(shown(shares, 'pods')).toEqual([q('4'), q('0')]);
  });

  it('divides the unused part again, evenly, once a cell has used more than half its even part of it', () => {
    const limit = amounts({ pods: '6' });
    // a has used all it holds, b none of its 4: the 4 unused are divided 2 and 2.
    const exhausted = [holder('a', { pods: '2' }, { pods: '2' }), holder('b', { pods: '4' }, { pods: '0' })];
    expect(shown(settleShares(limit, exhausted, 0, 1).shares, 'pods')).toEqual([q('4'), q('2')]);
    // a still has half of its even part left: nothing is rewritten.
    const within = [holder('a', { pods: '3' }, { pods: '2' }), holder('b', { pods: '3' }, { pods: '0' })];
    expect(shown(settleShares(limit, within, 0, 1).shares, 'pods')).toEqual([q('3'), q('3')]);
    // Not while a draw is recent (a cell keeps what it drew), nor before every cell's use is counted.
    const drawn = [holder('a', { pods: '2' }, { pods: '2' }), holder('b', { pods: '4' }, { pods: '0' }, 0)];
    expect(shown(settleShares(limit, drawn, 5, 10).shares, 'pods')).toEqual([q('2'), q('4')]);
    const uncounted = [holder('a', { pods: '2' }, { pods: '2' }), holder('b', { pods: '4' })];
    expect(shown(settleShares(limit, uncounted, 0, 1).shares, 'pods')).toEqual([q('2'), q('4')]);
  });

  it('counts a cell that admitted past its share as holding what it uses, so the excess is not handed out again', () => {
    const cells = [holder('a', { pods: '5' }, { pods: '7' }), holder('b', { pods: '3' }, { pods: '0' })];
    // Held back for a draw: nothing is handed out (it was, before: two pods too many).
    expect(
      shown(
        settleShares(amounts({ pods: '10' }), [...cells.slice(0, 1), { ...cells[1]!, drawnAt: 0 }], 0, 10)
          .shares,
        'pods',
      ),
    ).toEqual([q('7'), q('3')]);
    // Divided again: the 3 unused go where they are, a is given none of b's 3 twice.
    expect(shown(settleShares(amounts({ pods: '10' }), cells, 0, 1).shares, 'pods')).toEqual([
      q('9'),
      q('1'),
    ]);
  });

  it('cuts a surplus from unused share first, then from the largest shares, never below zero', () => {
    const cells = [
      holder('a', { pods: '4' }, { pods: '4' }),
      holder('b', { pods: '4' }, { pods: '1' }),
      holder('c', { pods: '2' }, { pods: '2' }),
    ];
    expect(shown(settleShares(amounts({ pods: '8' }), cells, 0, 1).shares, 'pods')).toEqual([
      q('4'),
      q('2'),
      q('2'),
    ]);
    // Below what is used: shares below use admit nothing more, as a lowered limit on one apiserver.
    expect(shown(settleShares(amounts({ pods: '3' }), cells, 0, 1).shares, 'pods')).toEqual([
      q('0'),
      q('1'),
      q('2'),
    ]);
    expect(shown(settleShares(amounts({ pods: '0' }), cells, 0, 1).shares, 'pods')).toEqual([
      q('0'),
      q('0'),
      q('0'),
    ]);
  });

  it('hands a shortfall out evenly, but not while a recent draw may still be giving it', () => {
    const cells = [
      holder('a', { pods: '1' }, { pods: '1' }, 1_000),
      holder('b', { pods: '1' }, { pods: '0' }),
    ];
    const held = settleShares(amounts({ pods: '6' }), cells, 5_000, 10_000);
    expect(shown(held.shares, 'pods')).toEqual([q('1'), q('1')]);
    expect(held.retryAfterMs).toBe(6_000);
    const later = settleShares(amounts({ pods: '6' }), cells, 11_000, 10_000);
    expect(shown(later.shares, 'pods')).toEqual([q('3'), q('3')]);
    expect(later.retryAfterMs).toBeUndefined();
  });

  it('gives a cell that joins no share of a limit already handed out, and drops names no longer limited', () => {
    const { shares } = settleShares(
      amounts({ pods: '4' }),
      [holder('a', { pods: '2', 'requests.cpu': '1' }), holder('b', { pods: '2' }), holder('c')],
      0,
      10_000,
    );
    expect(shown(shares, 'pods')).toEqual([q('2'), q('2'), q('0')]);
    expect(shares.get('a')!.has('requests.cpu')).toBe(false);
  });

  it('never hands out more than the limit, whatever the shares and uses', () => {
    for (let seed = 1; seed < 200; seed++) {
      const random = (max: number) =>
        BigInt(Math.floor(((seed * 7919 + max * 104729) % 1000) / (1000 / (max + 1))));
      const limit = random(20);
      const cells = ['a', 'b', 'c'].map((cell, i) =>
        holder(cell, { pods: String(random(10 + i)) }, { pods: String(random(5 + i)) }),
      );
      const { shares } = settleShares(new Map([['pods', limit * q('1')]]), cells, 0, 1);
      const total = shown(shares, 'pods').reduce((a, b) => a! + b!, 0n)!;
      expect(total).toBeLessThanOrEqual(limit * q('1'));
      for (const share of shown(shares, 'pods')) expect(share! >= 0n).toBe(true);
    }
  });
});

describe('drawFrom', () => {
  it('takes every other copy’s unused limit, for the names the drawing cell limits', () => {
    const takes = drawFrom(
      [
        {
          cell: 'a',
          hard: amounts({ pods: '2', 'requests.cpu': '500m' }),
          used: amounts({ pods: '2', 'requests.cpu': '500m' }),
        },
        {
          cell: 'b',
          hard: amounts({ pods: '2', 'requests.cpu': '500m', secrets: '3' }),
          used: amounts({ pods: '1', 'requests.cpu': '0' }),
        },
        { cell: 'c', hard: amounts({ pods: '1' }), used: amounts({ pods: '1' }) },
      ],
      'a',
    );
    expect(takes).toEqual(
      new Map([
        [
          'b',
          new Map([
            ['pods', q('1')],
            ['requests.cpu', q('500m')],
          ]),
        ],
      ]),
    );
  });

  it('takes nothing from a copy over its limit', () => {
    const takes = drawFrom(
      [
        { cell: 'a', hard: amounts({ pods: '1' }), used: amounts({ pods: '1' }) },
        { cell: 'b', hard: amounts({ pods: '1' }), used: amounts({ pods: '3' }) },
      ],
      'a',
    );
    expect(takes.size).toBe(0);
  });
});
