import fc from 'fast-check';

import { decodeCellVersions, encodeCellVersions, itemCellVersions } from './cell-versions.ts';

describe('itemCellVersions', () => {
  it("is the list's versions with the item's cell at the item's own number, from one template per list and cell", () => {
    const cell = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/);
    const version = fc.nat().map(String);
    fc.assert(
      fc.property(
        fc.dictionary(cell, version, { maxKeys: 5 }),
        cell,
        fc.array(version, { minLength: 1, maxLength: 4 }),
        (list, itemCell, owns) => {
          const listVersions = new Map(Object.entries(list));
          for (const own of owns) {
            // The same list asked again (the template kept), and a cell the list may not name.
            const composite = itemCellVersions(listVersions, itemCell, own);
            expect(composite).toBe(encodeCellVersions(new Map([...listVersions, [itemCell, own]])));
            expect(decodeCellVersions(composite!)?.get(itemCell)).toBe(own);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('gives nothing for a version that is not one apiserver number', () => {
    const listVersions = new Map([['cell-1', '10']]);
    for (const own of [undefined, '', 'cf1.abc', '12a'])
      expect(itemCellVersions(listVersions, 'cell-1', own)).toBeUndefined();
  });
});
