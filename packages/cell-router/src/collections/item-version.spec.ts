import { decodeCellVersions } from './cell-versions.ts';
import { withItemVersion } from './item-version.ts';

const LIST = new Map([
  ['cell-1', '900'],
  ['cell-2', '400'],
]);

describe('withItemVersion', () => {
  it('gives a listed object the list’s versions with its own cell’s replaced by its own', () => {
    const item = JSON.stringify({
      metadata: { name: 'web', namespace: 'shop', uid: 'u', resourceVersion: '812' },
      spec: { template: { metadata: { annotations: { note: '"resourceVersion":"1"' } } } },
    });
    const shown = JSON.parse(withItemVersion(item, 'cell-1', LIST).toString());
    expect(decodeCellVersions(shown.metadata.resourceVersion)).toEqual(
      new Map([
        ['cell-1', '812'],
        ['cell-2', '400'],
      ]),
    );
    expect(shown.spec.template.metadata.annotations.note).toBe('"resourceVersion":"1"');
  });

  it('does the same for a Table row’s object, and adds a cell the list did not name', () => {
    const row = Buffer.from(
      JSON.stringify({ cells: ['web', '1/1'], object: { metadata: { name: 'web', resourceVersion: '5' } } }),
    );
    const shown = JSON.parse(withItemVersion(row, ':control-plane', LIST).toString());
    expect(shown.cells).toEqual(['web', '1/1']);
    expect(decodeCellVersions(shown.object.metadata.resourceVersion)?.get(':control-plane')).toBe('5');
  });

  it('leaves an item without a plain version as it is', () => {
    for (const item of [
      JSON.stringify({ metadata: { name: 'web' } }),
      JSON.stringify({ metadata: { name: 'web', resourceVersion: 'cf1.abc' } }),
    ])
      expect(withItemVersion(item, 'cell-1', LIST)).toBe(item);
  });
});
