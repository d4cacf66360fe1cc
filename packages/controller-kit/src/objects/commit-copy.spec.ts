import { type KubeObject } from '@cellfed/federation';

import { ApiError } from '../kube/api-error.ts';
import { FakeCell } from '../testing/fake-cell.ts';
import { commitCopy } from './commit-copy.ts';

const PATH = '/apis/apps/v1/namespaces/shop/deployments/web';
const MARK = 'example.io/copied';
const HELD = 'example.io/held-spec';
const MANAGERS = [{ manager: 'helm', operation: 'Apply', apiVersion: 'apps/v1' }];
const signal = new AbortController().signal;

function setUp() {
  const cell = new FakeCell('a');
  const copy = cell.put(PATH, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      annotations: { [MARK]: 'b', kept: 'yes' },
      managedFields: [{ manager: 'creator', operation: 'Update' }],
    },
  });
  /** Commits on the version last seen, or reads the copy first (`'read'`). */
  const commit = (seen: 'created' | 'read' = 'created') =>
    commitCopy({
      client: cell,
      path: PATH,
      mark: MARK,
      managedFields: MANAGERS,
      ...(seen === 'created' ? { known: copy.metadata } : {}),
      fieldManager: 'committer',
      signal,
    });
  return { cell, commit };
}

describe('commitCopy', () => {
  it('removes the mark and sets the field managers in one write on the version known', async () => {
    const { cell, commit } = setUp();

    expect(await commit()).toBe(true);

    const committed = cell.get(PATH)!;
    expect(committed.metadata.annotations).toEqual({ kept: 'yes' });
    expect(committed.metadata.managedFields).toEqual(MANAGERS);
    expect(cell.writes).toEqual([{ method: 'PATCH', path: PATH }]);
    expect(cell.reads).toEqual([]);
  });

  it('reads the copy again when it changed since, and commits that version', async () => {
    const { cell, commit } = setUp();
    // The cell's controllers wrote the copy after it was seen.
    cell.put(PATH, { ...cell.get(PATH)!, status: { replicas: 1 } } as KubeObject);

    expect(await commit()).toBe(true);

    expect(cell.get(PATH)!.metadata.annotations).toEqual({ kept: 'yes' });
    expect(cell.get(PATH)).toMatchObject({ status: { replicas: 1 } });
    expect(cell.reads).toEqual([PATH]);
  });

  it('writes nothing to a copy committed already, or gone', async () => {
    const { cell, commit } = setUp();
    expect(await commit()).toBe(true);
    expect(await commit('read')).toBe(false);
    cell.objects.delete(PATH);
    expect(await commit('read')).toBe(false);
    expect(cell.writes).toHaveLength(1);
  });

  it('sets back the spec fields the copy was created without, and removes their record, in the same write', async () => {
    const cell = new FakeCell('a');
    const jobPath = '/apis/batch/v1/namespaces/shop/jobs/report';
    const created = cell.put(jobPath, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'report',
        namespace: 'shop',
        annotations: { [MARK]: 'b', [HELD]: '{"suspend":null}' },
      },
      spec: { suspend: true, parallelism: 2 },
    } as KubeObject);

    const commit = { client: cell, path: jobPath, mark: MARK, fieldManager: 'committer', signal };
    expect(await commitCopy({ ...commit, heldSpec: HELD, known: created.metadata })).toBe(true);

    const committed = cell.get(jobPath)! as KubeObject & { spec: unknown };
    expect(committed.spec).toEqual({ parallelism: 2 });
    expect(committed.metadata.annotations).toEqual({});
    expect(cell.writes).toEqual([{ method: 'PATCH', path: jobPath }]);
  });

  it('sets back nothing but suspend, whatever the held spec says: the commit passes no admission', async () => {
    const cell = new FakeCell('a');
    const jobPath = '/apis/batch/v1/namespaces/shop/jobs/forged';
    const forged = '{"suspend":false,"template":{"spec":{"hostNetwork":true}}}';
    const created = cell.put(jobPath, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'forged', namespace: 'shop', annotations: { [MARK]: 'b', [HELD]: forged } },
      spec: { suspend: true, template: { spec: { containers: [] } } },
    } as KubeObject);

    const commit = { client: cell, path: jobPath, mark: MARK, fieldManager: 'committer', signal };
    expect(await commitCopy({ ...commit, heldSpec: HELD, known: created.metadata })).toBe(true);

    const committed = cell.get(jobPath)! as KubeObject & { spec: unknown };
    expect(committed.spec).toEqual({ suspend: false, template: { spec: { containers: [] } } });
    expect(committed.metadata.annotations).toEqual({});
  });

  it('gives up after a few conflicts in a row, with the conflict', async () => {
    const { cell, commit } = setUp();
    // Another writer changes the copy before each write.
    cell.before = () => void cell.put(PATH, cell.get(PATH)!);

    await expect(commit()).rejects.toBeInstanceOf(ApiError);
    expect(cell.writes).toHaveLength(5);
    expect(cell.get(PATH)!.metadata.annotations?.[MARK]).toBe('b');
  });

  it('records the generation clients knew beside the copy’s own after the commit, counting the commit’s', async () => {
    const cell = new FakeCell('a');
    const copy = cell.put(PATH, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', annotations: { [MARK]: 'b', [HELD]: '{"suspend":false}' } },
      spec: { suspend: true },
    });
    expect(copy.metadata.generation).toBe(1);
    await commitCopy({
      client: cell,
      path: PATH,
      mark: MARK,
      heldSpec: HELD,
      known: copy.metadata,
      shownGeneration: 7,
      fieldManager: 'committer',
      signal,
    });
    // The held spec set back is a new generation: 2, shown as 7.
    const committed = cell.get(PATH)!;
    expect(committed.metadata.generation).toBe(2);
    expect(committed.metadata.annotations?.['cellfed.io/generation']).toBe('7:2');
    expect(cell.writes.filter((write) => write.method === 'PATCH')).toHaveLength(1);
  });

  it('counts a client’s write that reached the copy before its commit', async () => {
    const cell = new FakeCell('a');
    const made = cell.put(PATH, {
      metadata: { name: 'web', namespace: 'shop', annotations: { [MARK]: 'b' } },
      spec: { replicas: 1 },
    });
    // The old copy handed over; a client's write reaches the copy (a Deployment: a new generation).
    cell.put(PATH, {
      ...made,
      metadata: { ...made.metadata, annotations: { ...made.metadata.annotations, seq: '9' } },
    });
    await commitCopy({
      client: cell,
      path: PATH,
      mark: MARK,
      known: made.metadata,
      shownGeneration: 7,
      madeAtGeneration: made.metadata.generation!,
      annotationsBumpGeneration: true,
      fieldManager: 'committer',
      signal,
    });
    const committed = cell.get(PATH)!;
    expect(committed.metadata.generation).toBe(3);
    // Clients knew 7, and the write made 8: shown 8 now.
    expect(committed.metadata.annotations?.['cellfed.io/generation']).toBe('8:3');
  });

  it('corrects the record when the apiserver counted the commit otherwise than foreseen', async () => {
    const cell = new FakeCell('a');
    const path = '/apis/apps/v1/namespaces/shop/statefulsets/web';
    const copy = cell.put(path, {
      metadata: { name: 'web', namespace: 'shop', annotations: { [MARK]: 'b' } },
      spec: {},
    });
    // Foreseen: a new generation for the annotations changed (a Deployment's apiserver counts them); this one
    // does not.
    await commitCopy({
      client: cell,
      path,
      mark: MARK,
      known: copy.metadata,
      shownGeneration: 4,
      annotationsBumpGeneration: true,
      fieldManager: 'committer',
      signal,
    });
    expect(cell.get(path)!.metadata.annotations?.['cellfed.io/generation']).toBe('4:1');
  });
});
