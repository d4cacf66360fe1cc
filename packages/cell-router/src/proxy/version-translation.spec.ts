import { encodeCellVersions } from '../collections/cell-versions.ts';
import { shownVersion } from '../collections/source-versions.ts';
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

  it("reads the cell at its own version from an object version's number, another cell's at the latest", () => {
    const version = shownVersion('cell-1', '120')!;
    expect(cellVersionTarget(`${path}?resourceVersion=${version}`, 'cell-1')).toEqual({
      target: `${path}?resourceVersion=120`,
    });
    expect(cellVersionTarget(`${path}?resourceVersion=${version}`, 'cell-2')).toEqual({ target: path });
  });

  it.each([path, `${path}?resourceVersion=`, `${path}?resourceVersion=0`])('leaves %s alone', (target) => {
    expect(cellVersionTarget(target, 'cell-1')).toBeUndefined();
  });

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

  it('answers a conflict where the composite does not name the cell, in kube-apiserver’s words', () => {
    const body = Buffer.from(JSON.stringify({ metadata: { resourceVersion: listed } }));
    expect(cellVersionBody('application/json', body, 'cell-3')).toMatchObject({ status: { code: 409 } });
    const about = { resource: 'deployments', group: 'apps', name: 'web' };
    expect(cellVersionBody('application/json', body, 'cell-3', about)).toMatchObject({
      status: {
        code: 409,
        reason: 'Conflict',
        message:
          'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
        details: { name: 'web', group: 'apps', kind: 'deployments' },
      },
    });
  });

  it("puts the cell's own version for an object version's number, in the bytes, and refuses another cell's", () => {
    const version = shownVersion('cell-1', '120')!;
    // A custom resource's integer past 2^53 survives: the body is not re-encoded.
    const text = `{"apiVersion":"x/v1","kind":"T","metadata":{"name":"x","resourceVersion":"${version}"},"spec":{"n":9007199254740993}}`;
    const answer = cellVersionBody('application/json', Buffer.from(text), 'cell-1');
    expect(answer && 'body' in answer && answer.body.toString()).toBe(text.replace(version, '120'));
    expect(cellVersionBody('application/json', Buffer.from(text), 'cell-2')).toMatchObject({
      status: { code: 409, reason: 'Conflict' },
    });
  });

  it("translates a delete's precondition, and a body written with spaces", () => {
    const version = shownVersion('cell-2', '7')!;
    const options = Buffer.from(
      JSON.stringify({ kind: 'DeleteOptions', preconditions: { resourceVersion: version } }),
    );
    const answer = cellVersionBody('application/json', options, 'cell-2');
    expect(answer && 'body' in answer && JSON.parse(answer.body.toString()).preconditions).toEqual({
      resourceVersion: '7',
    });
    const pretty = Buffer.from(JSON.stringify({ metadata: { resourceVersion: version } }, null, 2));
    const translated = cellVersionBody('application/json', pretty, 'cell-2');
    expect(translated && 'body' in translated && JSON.parse(translated.body.toString())).toEqual({
      metadata: { resourceVersion: '7' },
    });
  });

  it('leaves a body without a version alone', () => {
    expect(
      cellVersionBody('application/json', Buffer.from('{"metadata":{"name":"x"}}'), 'cell-1'),
    ).toBeUndefined();
    expect(
      cellVersionBody('application/json', Buffer.from('{"metadata":{"resourceVersion":"0"}}'), 'cell-1'),
    ).toBeUndefined();
  });
});
