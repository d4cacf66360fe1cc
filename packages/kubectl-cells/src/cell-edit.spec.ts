import { editCells, editSettled, progressLine } from './cell-edit.ts';

const cells = [
  { id: 'a', state: 'Normal' as const, kubeconfigSecretRef: { name: 'a-kubeconfig' } },
  { id: 'b', state: 'Normal' as const, kubeconfigSecretRef: { name: 'b-kubeconfig' } },
];

describe('editCells', () => {
  it('adds a cell as Joining with its conventional Secret, or the one given', () => {
    expect(editCells(cells, { kind: 'add', id: 'c', weight: 2 }).at(-1)).toEqual({
      id: 'c',
      state: 'Joining',
      weight: 2,
      kubeconfigSecretRef: { name: 'c-kubeconfig' },
    });
    expect(
      editCells(cells, { kind: 'add', id: 'c', weight: 1, secret: { namespace: 'x', name: 'y' } }).at(-1)
        ?.kubeconfigSecretRef,
    ).toEqual({ namespace: 'x', name: 'y' });
  });

  it('drains, marks Down and lets a Down cell rejoin, leaving the others as they are', () => {
    expect(editCells(cells, { kind: 'drain', id: 'b' }).map((cell) => cell.state)).toEqual([
      'Normal',
      'Draining',
    ]);
    const down = editCells(cells, { kind: 'down', id: 'b' });
    expect(down.map((cell) => cell.state)).toEqual(['Normal', 'Down']);
    expect(editCells(down, { kind: 'rejoin', id: 'b' }).map((cell) => cell.state)).toEqual([
      'Normal',
      'Joining',
    ]);
  });

  it.each([
    [{ kind: 'add', id: 'a', weight: 1 } as const, 'cell a is already in the CellSet (Normal)'],
    [{ kind: 'drain', id: 'x' } as const, 'cell x is not in the CellSet'],
    [{ kind: 'rejoin', id: 'a' } as const, 'cell a is Normal: rejoin applies to a Down cell'],
  ])('refuses %j', (edit, message) => {
    expect(() => editCells(cells, edit)).toThrow(message);
  });

  it('changes a Normal cell’s weight with previousWeight, so objects move before requests follow', () => {
    const weighted = editCells(cells, { kind: 'weight', id: 'b', weight: 3 });
    expect(weighted[1]).toEqual({ ...cells[1], weight: 3, previousWeight: 1 });
    expect(weighted[0]).toEqual(cells[0]);
    expect(() => editCells(weighted, { kind: 'weight', id: 'b', weight: 5 })).toThrow(
      'cell b is still changing weight (1 → 3); wait for that rebalance to finish',
    );
    expect(() => editCells(cells, { kind: 'weight', id: 'b', weight: 1 })).toThrow('cell b already weighs 1');
    const joining = [cells[0]!, { ...cells[1]!, state: 'Joining' as const }];
    expect(() => editCells(joining, { kind: 'weight', id: 'b', weight: 2 })).toThrow(
      'cell b is Joining: only a Normal cell changes weight',
    );
    expect(editSettled(weighted, { kind: 'weight', id: 'b', weight: 3 })).toBe(false);
    expect(
      editSettled([cells[0]!, { ...cells[1]!, weight: 3 }], { kind: 'weight', id: 'b', weight: 3 }),
    ).toBe(true);
  });

  it('refuses what the controllers would refuse: no Normal cell left', () => {
    const one = [cells[0]!];
    expect(() => editCells(one, { kind: 'down', id: 'a' })).toThrow(
      /the CellSet would be invalid: .*at least one cell must be Normal/,
    );
  });
});

describe('editSettled', () => {
  it('is done when the cell is Normal, gone after a drain, Down after down', () => {
    expect(editSettled(cells, { kind: 'add', id: 'a', weight: 1 })).toBe(true);
    expect(editSettled([{ ...cells[0]!, state: 'Joining' }], { kind: 'add', id: 'a', weight: 1 })).toBe(
      false,
    );
    expect(editSettled(cells, { kind: 'drain', id: 'b' })).toBe(false);
    expect(editSettled([cells[0]!], { kind: 'drain', id: 'b' })).toBe(true);
    expect(editSettled([{ ...cells[1]!, state: 'Down' }], { kind: 'down', id: 'b' })).toBe(true);
  });
});

describe('progressLine', () => {
  it('draws how far the rebalance is, with its ETA', () => {
    expect(progressLine({ moved: 50, toMove: 200 }, 12)).toBe(
      '[#####---------------] 50/200 objects moved, about 12 s left',
    );
    expect(progressLine(undefined)).toBe('[--------------------] waiting for the rebalance to start');
  });
});
