import { CellSetReader } from './cell-set-reader.ts';

const cellSet = (resourceVersion: string, generation: number, cells: unknown[]) => ({
  apiVersion: 'cells.cellfed.io/v1alpha1',
  kind: 'CellSet',
  metadata: { name: 'default', uid: 'u1', resourceVersion, generation },
  spec: { cells },
});
const cell = (id: string, state = 'Normal') => ({ id, state, kubeconfigSecretRef: { name: id } });

describe('CellSetReader', () => {
  it('says why there is nothing to use until a valid CellSet is read', () => {
    const reader = new CellSetReader();
    expect(reader.read(undefined)).toMatchObject({
      current: undefined,
      lastGood: undefined,
      problem: 'the CellSet does not exist',
    });
    const reading = reader.read(cellSet('1', 1, [cell('a')]));
    expect(reading.problem).toBe('');
    expect(reading.current?.spec.cells.map((entry) => entry.id)).toEqual(['a']);
    expect(reading.lastGood).toBe(reading.current);
  });

  it('parses a stored version once: the same reading for the same resourceVersion', () => {
    const reader = new CellSetReader();
    const first = reader.read(cellSet('1', 1, [cell('a')]));
    expect(reader.read(cellSet('1', 1, [cell('a')]))).toBe(first);
    const next = reader.read(cellSet('2', 2, [cell('a'), cell('b', 'Joining')]));
    expect(next).not.toBe(first);
    expect(next.current?.metadata.generation).toBe(2);
  });

  it('keeps the last good CellSet through an invalid edit and a deletion, and names the problem', () => {
    const reader = new CellSetReader();
    const good = reader.read(cellSet('1', 1, [cell('a')])).current;
    const invalid = reader.read(cellSet('2', 2, [cell('a', 'Sideways')]));
    expect(invalid.current).toBeUndefined();
    expect(invalid.lastGood).toBe(good);
    expect(invalid.problem).toMatch(/^the CellSet is invalid: spec\.cells\[0\]\.state: must be one of /);
    const gone = reader.read(undefined);
    expect(gone).toMatchObject({ current: undefined, lastGood: good, problem: 'the CellSet does not exist' });
    // Valid again: current and last good move on.
    expect(reader.read(cellSet('3', 3, [cell('a'), cell('b')])).lastGood?.spec.cells).toHaveLength(2);
  });
});
