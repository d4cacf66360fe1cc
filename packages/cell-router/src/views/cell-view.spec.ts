import { HELD_OWNERS_ANNOTATION, ORIGIN_CREATED_ANNOTATION, ORIGIN_UID_ANNOTATION } from '@cellfed/api';
import { jest } from '@jest/globals';
import { formatHeldOwners, type OwnerReference } from '@cellfed/federation';

import type { CellOwners } from './cell-owners.ts';
import { cellViewOfWrite, writeShape, type WriteShape } from './cell-view.ts';
import { CellViewError } from '../errors.ts';

const owner = (uid: string, extra: Partial<OwnerReference> = {}): OwnerReference => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: `web-${uid}`,
  uid,
  ...extra,
});
const cronJob: OwnerReference = { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'native' };

/** A reader that counts its calls and answers `now`. */
function reader(now: CellOwners | undefined) {
  const read = jest.fn(() => Promise.resolve(now));
  return read;
}
const inCell = (
  native: OwnerReference[],
  held: OwnerReference[],
  annotations = true,
  identity: Record<string, string> = {},
): CellOwners => ({
  native,
  held,
  resourceVersion: '42',
  hasAnnotations: annotations,
  identity,
});

async function view(shape: WriteShape, body: unknown, now?: CellOwners, method = 'PUT', type?: string) {
  const read = reader(now);
  const written = await cellViewOfWrite(
    shape,
    method,
    type ?? 'application/json',
    Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
    read,
  );
  return {
    body: written && (JSON.parse(written.body.toString()) as { metadata?: unknown }),
    reads: read.mock.calls.length,
  };
}

describe('cell view of a write', () => {
  it('knows the shape of a write from its method and content type', () => {
    expect(writeShape('POST', undefined)).toBe('object');
    expect(writeShape('PATCH', 'application/strategic-merge-patch+json')).toBe('strategic-merge-patch');
    expect(writeShape('PATCH', 'application/apply-patch+yaml; charset=utf-8')).toBe('apply');
    expect(writeShape('PATCH', 'application/cbor')).toBeUndefined();
    expect(writeShape('GET', undefined)).toBeUndefined();
  });

  it('leaves a patch without owner references, and an update of an object never copied, alone', async () => {
    const patch = await view('merge-patch', { metadata: { labels: { a: 'b' } } });
    expect(patch).toEqual({ body: undefined, reads: 0 });
    const update = await view(
      'object',
      { metadata: { name: 'x', uid: 'u', labels: { a: 'b' } } },
      inCell([], []),
    );
    expect(update).toEqual({ body: undefined, reads: 1 });
  });

  it('sends an update of a copy with the annotations that keep its identity, and without the uid clients know', async () => {
    const identity = {
      [ORIGIN_UID_ANNOTATION]: 'first',
      [ORIGIN_CREATED_ANNOTATION]: '2026-01-01T00:00:00Z',
    };
    const copy = inCell([], [], true, identity);
    // What a client read through the router: the first uid, no identity annotations.
    const shown = await view(
      'object',
      { metadata: { name: 'x', uid: 'first', annotations: { a: 'b' } } },
      copy,
    );
    expect(shown).toEqual({
      body: { metadata: { name: 'x', annotations: { ...identity, a: 'b' } } },
      reads: 1,
    });
    // The cell's own uid (an update built from a cell's answer) stays and is checked by the cell.
    const own = await view('object', { metadata: { name: 'x', uid: 'copy' } }, copy);
    expect(own.body).toEqual({ metadata: { name: 'x', uid: 'copy', annotations: identity } });
  });

  it('never lets an update set or remove the marks of a move: a copied-from read before the commit stays out', async () => {
    const stale = { metadata: { name: 'x', annotations: { 'cellfed.io/copied-from': 'cell-1/u', a: 'b' } } };
    const committed = await view('object', stale, inCell([], [], true, { [ORIGIN_UID_ANNOTATION]: 'first' }));
    expect(committed.body).toEqual({
      metadata: { name: 'x', annotations: { a: 'b', [ORIGIN_UID_ANNOTATION]: 'first' } },
    });
    const never = await view('object', structuredClone(stale), inCell([], []));
    expect(never.body).toEqual({ metadata: { name: 'x', annotations: { a: 'b' } } });
  });

  it('keeps a copy’s identity when a JSON patch replaces its annotations whole (kubectl rollout undo)', async () => {
    const identity = { [ORIGIN_UID_ANNOTATION]: 'first' };
    const undo = [
      { op: 'replace', path: '/spec/template', value: { metadata: {} } },
      { op: 'replace', path: '/metadata/annotations', value: { 'deployment.kubernetes.io/revision': '3' } },
    ];
    const copy = await view('json-patch', undo, inCell([], [], true, identity));
    expect(copy.body).toEqual([
      undo[0],
      {
        op: 'replace',
        path: '/metadata/annotations',
        value: { ...identity, 'deployment.kubernetes.io/revision': '3' },
      },
    ]);
    expect(await view('json-patch', undo, inCell([], []))).toEqual({ body: undefined, reads: 1 });
  });

  it('holds every reference of a create, without reading the cell', async () => {
    const { body, reads } = await view(
      'object',
      { metadata: { name: 'x', ownerReferences: [owner('a')] } },
      undefined,
      'POST',
    );
    expect(reads).toBe(0);
    expect(body!.metadata).toEqual({
      name: 'x',
      annotations: { [HELD_OWNERS_ANNOTATION]: formatHeldOwners([owner('a')]) },
    });
  });

  it('keeps what the cell has natively native on an update, and drops a stale held annotation', async () => {
    const { body } = await view(
      'object',
      {
        metadata: {
          name: 'x',
          annotations: { [HELD_OWNERS_ANNOTATION]: 'stale' },
          ownerReferences: [cronJob],
        },
      },
      inCell([cronJob], [owner('gone')]),
    );
    expect(body!.metadata).toEqual({ name: 'x', ownerReferences: [cronJob] });
  });

  it('holds the applied references of a server-side apply, YAML or JSON', async () => {
    const yaml =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  ownerReferences:\n  - {apiVersion: apps/v1, kind: Deployment, name: web-a, uid: a}\n';
    const { body, reads } = await view('apply', yaml, undefined, 'PATCH', 'application/apply-patch+yaml');
    expect(reads).toBe(0);
    expect(body!.metadata).toEqual({
      name: 'x',
      annotations: { [HELD_OWNERS_ANNOTATION]: formatHeldOwners([owner('a')]) },
    });
  });

  it('reads owner references whose key a JSON escape spells, as the apiserver would', async () => {
    const text = JSON.stringify({ metadata: { ownerReferences: [owner('a')] } }).replace(
      'ownerReferences',
      'owner\\u0052eferences',
    );
    expect(text).not.toContain('ownerReferences');
    const { body } = await view('merge-patch', text, inCell([], []));
    expect(body!.metadata).toEqual({
      ownerReferences: null,
      annotations: { [HELD_OWNERS_ANNOTATION]: formatHeldOwners([owner('a')]) },
    });
  });

  it('turns a merge patch of the list into the native list and the held annotation, null for empty', async () => {
    const { body } = await view(
      'merge-patch',
      { metadata: { ownerReferences: [cronJob, owner('a')] } },
      inCell([cronJob], []),
    );
    expect(body!.metadata).toEqual({
      ownerReferences: [cronJob],
      annotations: { [HELD_OWNERS_ANNOTATION]: formatHeldOwners([owner('a')]) },
    });
    const cleared = await view(
      'merge-patch',
      { metadata: { ownerReferences: null } },
      inCell([], [owner('a')]),
    );
    expect(cleared.reads).toBe(0);
    expect(cleared.body!.metadata).toEqual({
      ownerReferences: null,
      annotations: { [HELD_OWNERS_ANNOTATION]: null },
    });
  });

  it('merges a strategic patch against what the client sees, at the version it read', async () => {
    const patch = {
      metadata: { ownerReferences: [{ uid: 'a', $patch: 'delete' }, owner('b')] },
      data: { k: 'v' },
    };
    const { body } = await view('strategic-merge-patch', patch, inCell([cronJob], [owner('a')]));
    expect(body).toEqual({
      data: { k: 'v' },
      metadata: {
        ownerReferences: [cronJob, { $patch: 'replace' }],
        annotations: { [HELD_OWNERS_ANNOTATION]: formatHeldOwners([owner('b')]) },
        resourceVersion: '42',
      },
    });
  });

  it('runs a JSON patch’s owner operations here and sends the rest with a version test', async () => {
    const patch = [
      { op: 'add', path: '/metadata/ownerReferences/-', value: owner('b') },
      { op: 'replace', path: '/data/k', value: 'v' },
    ];
    const { body } = await view('json-patch', patch, inCell([], [owner('a')], false));
    expect(body).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'replace', path: '/data/k', value: 'v' },
      {
        op: 'add',
        path: '/metadata/annotations',
        value: { [HELD_OWNERS_ANNOTATION]: formatHeldOwners([owner('a'), owner('b')]) },
      },
    ]);
    const removal = await view(
      'json-patch',
      [{ op: 'remove', path: '/metadata/ownerReferences/0' }],
      inCell([], [owner('a')]),
    );
    expect(removal.body).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'remove', path: '/metadata/annotations/cellfed.io~1owner-references' },
    ]);
  });

  it('refuses references without their required fields and patches that do not apply', async () => {
    await expect(
      view('object', { metadata: { ownerReferences: [{ uid: 'a' }] } }, undefined, 'POST'),
    ).rejects.toThrow(CellViewError);
    await expect(
      view('json-patch', [{ op: 'remove', path: '/metadata/ownerReferences/5' }], inCell([], [owner('a')])),
    ).rejects.toThrow(/does not apply/);
  });

  it('passes a patch of an object the cell does not have to the cell, which answers 404', async () => {
    expect(
      (await view('strategic-merge-patch', { metadata: { ownerReferences: [owner('a')] } }, undefined)).body,
    ).toBeUndefined();
  });
});
