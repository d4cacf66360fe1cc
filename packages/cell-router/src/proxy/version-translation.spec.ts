import { encodeCellVersions } from '../collections/cell-versions.ts';
import { cellVersionBody, cellVersionTarget } from './version-translation.ts';

const listed = encodeCellVersions(
  new Map([
    ['cell-1', '120'],
    ['cell-2', '7'],
  ]),
);
const path = '/api/v1/namespaces/a/configmaps/x';

describe('cellVersionTarget', () => {
  it("reads the cell at its own version from a list's composite", () => {
    expect(cellVersionTarget(`${path}?resourceVersion=${listed}`, 'cell-2')).toEqual({
      target: `${path}?resourceVersion=7`,
    });
  });

  it('keeps the other query parameters', () => {
    expect(cellVersionTarget(`${path}?pretty=true&resourceVersion=${listed}`, 'cell-1')).toEqual({
      target: `${path}?pretty=true&resourceVersion=120`,
    });
  });

  it('reads a cell the list did not know at its latest', () => {
    expect(cellVersionTarget(`${path}?resourceVersion=${listed}`, 'cell-3')).toEqual({ target: path });
  });

  it.each([path, `${path}?resourceVersion=`, `${path}?resourceVersion=0`, `${path}?resourceVersion=42`])(
    'leaves %s alone',
    (target) => {
      expect(cellVersionTarget(target, 'cell-1')).toBeUndefined();
    },
  );

  it('refuses a composite that does not decode with a 400', () => {
    const answer = cellVersionTarget(`${path}?resourceVersion=cf1.bm90LWpzb24`, 'cell-1');
    expect(answer).toMatchObject({ status: { code: 400, reason: 'BadRequest' } });
  });
});

describe('cellVersionBody', () => {
  it("puts the cell's own version in a JSON write", () => {
    const body = Buffer.from(JSON.stringify({ metadata: { name: 'x', resourceVersion: listed } }));
    const answer = cellVersionBody('application/json', body, 'cell-1');
    expect(answer && 'body' in answer && JSON.parse(answer.body.toString())).toEqual({
      metadata: { name: 'x', resourceVersion: '120' },
    });
  });

  it('answers a conflict where the composite does not name the cell', () => {
    const body = Buffer.from(JSON.stringify({ metadata: { resourceVersion: listed } }));
    expect(cellVersionBody('application/json', body, 'cell-3')).toMatchObject({ status: { code: 409 } });
  });
});
