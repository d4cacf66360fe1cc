import {
  FOLLOWER_LABEL,
  ORIGIN_GENERATION_ANNOTATION,
  ORIGIN_UID_ANNOTATION,
  QUIESCED_ANNOTATION,
  shownGeneration,
  COPIED_FROM_ANNOTATION,
  FENCED_AT_ANNOTATION,
  MIGRATED_AT_ANNOTATION,
} from '@cellfed/api';
import { ApiError } from '@cellfed/controller-kit';
import { FakeCell, FakeClock, memoryLogger, quotaRefusal } from '@cellfed/controller-kit/testing';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import { type KubeObject, type CellularObjectRef } from '@cellfed/federation';

import { ObjectMover, contentOf, type Move } from './object-mover.ts';
import { StatusSubresources } from './status-subresources.ts';

const ref: CellularObjectRef = {
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  namespace: 'shop',
  name: 'web',
};
const PATH = '/apis/apps/v1/namespaces/shop/deployments/web';
const REPLICA_SETS = '/apis/apps/v1/namespaces/shop/replicasets';

const deployment = (): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'shop',
    labels: { app: 'web' },
    annotations: { team: 'a' },
    ownerReferences: [{ uid: 'owner-in-old-cell' }],
    managedFields: [{ manager: 'kubectl' }],
  },
  spec: { replicas: 3, selector: { matchLabels: { app: 'web' } } },
  status: { replicas: 3, readyReplicas: 2 },
});

function setup() {
  // Time moves only when a test says so, synchronously, in the middle of a move.
  const fake = new FakeClock();
  let elapsed = 0;
  const clock = {
    now: () => fake.now() + elapsed,
    setTimer: fake.setTimer.bind(fake),
    advance: (ms: number) => (elapsed += ms),
  };
  const from = new FakeCell('cell-1');
  const to = new FakeCell('cell-2');
  from.put(PATH, deployment());
  const mover = new ObjectMover({ clock, statusSubresources: new StatusSubresources() });
  const move: Move = {
    ref,
    from: { id: 'cell-1', client: from },
    to: { id: 'cell-2', client: to },
    signal: new AbortController().signal,
    log: memoryLogger().logger,
  };
  return { clock, from, to, mover, move };
}

/** The end state every path must reach: old copy `migrated`, new copy committed and equal in content. */
function expectMoved(from: FakeCell, to: FakeCell): void {
  const old = from.get(PATH)!;
  const copy = to.get(PATH)!;
  expect(old.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBe(MIGRATED);
  expect(old.metadata.annotations?.[MIGRATED_AT_ANNOTATION]).toBeDefined();
  expect(copy.metadata.labels).toEqual({ app: 'web' });
  // The uid clients know the object by travels with it.
  // So does the generation clients knew of the old copy, beside the copy's own: the old copy's marks (a
  // Deployment counts annotation changes) and the commit made new generations that clients never see.
  const known = shownGeneration(old.metadata.generation!, old.metadata.annotations);
  expect(copy.metadata.annotations).toEqual({
    team: 'a',
    [ORIGIN_UID_ANNOTATION]: old.metadata.uid,
    [ORIGIN_GENERATION_ANNOTATION]: `${known}:${copy.metadata.generation}`,
  });
  expect(shownGeneration(copy.metadata.generation!, copy.metadata.annotations)).toBe(known);
  expect(copy.metadata.ownerReferences).toBeUndefined();
  expect(copy.metadata.managedFields).toEqual([{ manager: 'kubectl' }]);
  expect(copy.metadata.uid).not.toBe(old.metadata.uid);
  expect(copy.spec).toEqual(old.spec);
  expect((copy as { status?: unknown }).status).toEqual((old as { status?: unknown }).status);
}

describe('ObjectMover', () => {
  it('fences, copies (status through /status), marks migrated and commits, reporting the fence window', async () => {
    const { clock, from, to, mover, move } = setup();
    const patches: unknown[] = [];
    to.before = (method, _path, body) => {
      if (method === 'POST') clock.advance(40);
      if (method === 'PATCH') patches.push(body);
    };
    const outcome = await mover.move(move);
    expect(outcome).toEqual({ result: 'moved', fenceMs: 40 });
    expectMoved(from, to);
    // The object was at generation 1 for its clients, and still is: the move's own writes do not show.
    const moved = to.get(PATH)!;
    expect(shownGeneration(moved.metadata.generation!, moved.metadata.annotations)).toBe(1);
    expect(to.writes.map((write) => `${write.method} ${write.path}`)).toEqual([
      'POST /apis/apps/v1/namespaces/shop/deployments',
      `PUT ${PATH}/status`,
      `PATCH ${PATH}`,
    ]);
    // The commit gives the fields back to their managers: a create gives them all to the controller.
    expect(patches).toEqual([
      expect.objectContaining({
        metadata: expect.objectContaining({ managedFields: [{ manager: 'kubectl' }] }),
      }),
    ]);
  });

  it.each([1, 2, 3, 4, 5])(
    'a crash at write %i of the move resumes to the same end, with one copy',
    async (crashAt) => {
      const { from, to, mover, move } = setup();
      let writes = 0;
      const crash = () => {
        if (++writes === crashAt) throw new Error('controller killed');
      };
      from.before = crash;
      to.before = crash;
      await mover.move(move).then(
        () => undefined,
        (error: Error) => expect(error.message).toBe('controller killed'),
      );
      from.before = undefined;
      to.before = undefined;
      const outcome = await mover.move(move);
      expect(['moved', 'already-moved']).toContain(outcome.result);
      expectMoved(from, to);
      expect(to.objects.size).toBe(1);
    },
  );

  it('fences on the cached version without reading the old copy when the cache is current', async () => {
    const { from, to, mover, move } = setup();
    const cached = from.get(PATH)!.metadata;
    const outcome = await mover.move({ ...move, cached });
    expect(outcome.result).toBe('moved');
    expectMoved(from, to);
    // The one read is of the revision history, never of the old copy.
    expect(from.reads).toEqual([REPLICA_SETS]);
    expect(from.writes.map((write) => write.method)).toEqual(['PATCH', 'PATCH']);
  });

  it('reads the old copy and fences its version when the cached one is stale', async () => {
    const { from, to, mover, move } = setup();
    const cached = from.get(PATH)!.metadata;
    from.put(PATH, { ...deployment(), spec: { replicas: 5, selector: { matchLabels: { app: 'web' } } } });
    const outcome = await mover.move({ ...move, cached });
    expect(outcome.result).toBe('moved');
    expectMoved(from, to);
    expect((to.get(PATH)!.spec as { replicas: number }).replicas).toBe(5);
    expect(from.reads).toEqual([PATH, REPLICA_SETS]);
  });

  it('a cached copy gone by the time it is fenced is a source gone, not an error', async () => {
    const { from, mover, move } = setup();
    const cached = from.get(PATH)!.metadata;
    from.objects.delete(PATH);
    await expect(mover.move({ ...move, cached })).resolves.toEqual({ result: 'source-gone' });
  });

  it('replaces a stale or follower copy already in the new cell instead of trusting it', async () => {
    const { from, to, mover, move } = setup();
    to.put(PATH, {
      ...deployment(),
      spec: { replicas: 99 },
      metadata: { name: 'web', labels: { stale: 'yes', [FOLLOWER_LABEL]: 'cell-1' } },
    });
    await mover.move(move);
    expectMoved(from, to);
    expect(to.get(PATH)!.spec).toEqual({ replicas: 3, selector: { matchLabels: { app: 'web' } } });
    expect(to.get(PATH)!.metadata.labels).toEqual({ app: 'web' });
  });

  it('copies the status again when only the status changed while fenced (the old cell’s own controllers)', async () => {
    const { from, to, mover, move } = setup();
    to.before = (method) => {
      if (method === 'POST') {
        const old = from.get(PATH)!;
        from.put(PATH, { ...old, status: { replicas: 3, readyReplicas: 3 } } as KubeObject);
      }
    };
    expect((await mover.move(move)).result).toBe('moved');
    expectMoved(from, to);
    expect((to.get(PATH) as { status?: unknown }).status).toEqual({ replicas: 3, readyReplicas: 3 });
  });

  it('does not mark migrated when the spec changed while fenced: the copy is redone', async () => {
    const { from, to, mover, move } = setup();
    let once = true;
    to.before = (method) => {
      if (method === 'POST' && once) {
        once = false;
        const old = from.get(PATH)!;
        from.put(PATH, { ...old, spec: { replicas: 5 } } as KubeObject);
      }
    };
    await expect(mover.move(move)).rejects.toThrow(/changed while fenced/);
    expect(from.get(PATH)!.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBe(MIGRATING);
    await mover.move(move);
    expectMoved(from, to);
    expect(to.get(PATH)!.spec).toEqual({ replicas: 5 });
  });

  it('an object deleted by a user mid-migration stays deleted: its uncommitted copy goes too', async () => {
    const { from, to, mover, move } = setup();
    from.before = (method, path, body) => {
      const labels = (body as KubeObject).metadata?.labels;
      if (method === 'PATCH' && labels?.[REBALANCE_STATUS_LABEL] === MIGRATED) {
        from.objects.delete(path);
        throw new ApiError(404, { reason: 'NotFound' }, 'PATCH');
      }
    };
    const outcome = await mover.move(move);
    expect(outcome).toEqual({ result: 'source-gone', droppedCopy: true });
    expect(from.get(PATH)).toBeUndefined();
    expect(to.get(PATH)).toBeUndefined();
  });

  it('leaves a committed copy alone when its old copy is gone (the move finished long ago)', async () => {
    const { from, to, mover, move } = setup();
    await mover.move(move);
    from.objects.delete(PATH);
    expect(await mover.move(move)).toEqual({ result: 'source-gone' });
    expect(to.get(PATH)).toBeDefined();
  });

  it('stops before marking migrated when the CellSet changed during the move', async () => {
    const { from, mover, move } = setup();
    await expect(mover.move({ ...move, planStillCurrent: () => false })).rejects.toThrow(/CellSet changed/);
    expect(from.get(PATH)!.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBe(MIGRATING);
  });

  it('unfence takes a called-off move back: label and fence time removed, the copy deleted', async () => {
    const { from, to, mover, move } = setup();
    await expect(mover.move({ ...move, planStillCurrent: () => false })).rejects.toThrow();
    await mover.unfence(move);
    const old = from.get(PATH)!;
    expect(old.metadata.labels).toEqual({ app: 'web' });
    expect(old.metadata.annotations?.[FENCED_AT_ANNOTATION]).toBeUndefined();
    expect(to.get(PATH)).toBeUndefined();
  });

  it('deletes an old copy only if it is still the one that moved (uid precondition)', async () => {
    const { from, mover, move } = setup();
    expect(await mover.deleteCopy(move.from, ref, 'another-uid', move.signal)).toBe(false);
    expect(from.get(PATH)).toBeDefined();
    const uid = from.get(PATH)!.metadata.uid!;
    const deletes: unknown[] = [];
    from.before = (method, _path, body) => void (method === 'DELETE' && deletes.push(body));
    expect(await mover.deleteCopy(move.from, ref, uid, move.signal)).toBe(true);
    expect(from.get(PATH)).toBeUndefined();
    // Dependents go with it in the background, whatever the resource's default (a Job's orphans its pods).
    expect(deletes).toEqual([
      expect.objectContaining({ preconditions: { uid }, propagationPolicy: 'Background' }),
    ]);
  });

  it('commits a copy found later with the old copy’s field managers, read from its cell', async () => {
    const { from, to, mover, move } = setup();
    to.put(PATH, {
      ...deployment(),
      metadata: {
        ...deployment().metadata,
        annotations: { [COPIED_FROM_ANNOTATION]: 'cell-1/uid' },
        managedFields: [{ manager: 'cellfed-rebalance-controller' }],
      },
    });
    // The new cell's controllers write the copy's status between the commit's read and its write, twice.
    let statusWrites = 2;
    to.before = (method) => {
      if (method !== 'PATCH' || statusWrites === 0) return;
      statusWrites -= 1;
      const current = to.get(PATH)!;
      to.put(PATH, { ...current, status: { observedGeneration: 2 - statusWrites } });
    };
    await mover.commit(move.to, ref, move.signal, undefined, move.from);
    expect(statusWrites).toBe(0);
    const copy = to.get(PATH)!;
    expect(copy.metadata.annotations?.[COPIED_FROM_ANNOTATION]).toBeUndefined();
    expect(copy.metadata.managedFields).toEqual(from.get(PATH)!.metadata.managedFields);
  });

  it('marks a new copy with its source until committed', async () => {
    const { from, to, mover, move } = setup();
    await expect(mover.move({ ...move, planStillCurrent: () => false })).rejects.toThrow();
    expect(to.get(PATH)!.metadata.annotations?.[COPIED_FROM_ANNOTATION]).toBe(
      `cell-1/${from.get(PATH)!.metadata.uid}`,
    );
  });
});

describe('ObjectMover: quota', () => {
  const exceeded = quotaRefusal();

  it('draws quota share into a new cell that refuses the copy, and waits, asking the quota controller to look, when that was not enough', async () => {
    const { from, to, move } = setup();
    let refusals = 1;
    to.before = (method) => {
      if (method === 'POST' && refusals-- > 0) throw exceeded;
    };
    const drawn: string[] = [];
    const refused: string[] = [];
    const clock = new FakeClock();
    const mover = new ObjectMover({
      clock,
      statusSubresources: new StatusSubresources(),
      quota: { drawTo: (cell, namespace) => (drawn.push(`${cell}/${namespace}`), Promise.resolve(true)) },
      onQuotaRefused: (namespace) => refused.push(namespace),
    });
    await mover.move(move);
    expect(drawn).toEqual(['cell-2/shop']);
    expect(refused).toEqual([]);
    expect(to.get(PATH)).toBeDefined();

    // Nothing to draw: the move waits (the old copy stays fenced), and the quota controller is asked to count
    // the fenced old copy apart, which frees its share.
    from.objects.clear();
    from.put(PATH, deployment());
    to.objects.clear();
    refusals = 1;
    const stuck = new ObjectMover({
      clock,
      statusSubresources: new StatusSubresources(),
      quota: { drawTo: () => Promise.resolve(false) },
      onQuotaRefused: (namespace) => refused.push(namespace),
    });
    expect(await stuck.move(move)).toEqual({
      result: 'quota-wait',
      refusal: expect.stringContaining('exceeded quota: team'),
    });
    expect(refused).toEqual(['shop']);
    expect(to.get(PATH)).toBeUndefined();
    expect(from.get(PATH)?.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBe(MIGRATING);
  });

  it('goes on with a copy an earlier attempt made, though the new cell refuses its create for quota first', async () => {
    // A move retried once its copy was made (its status write met a 409): the apiserver's quota admission
    // refuses the second create before it finds the name taken, and at the quota's limit nothing can be
    // drawn. The copy already holds its share: the move replaces it and goes on.
    const { from, to, mover, move } = setup();
    // The first attempt made the copy, then stopped (here the plan changed; in the e2e, a 409 on its status).
    await expect(mover.move({ ...move, planStillCurrent: () => false })).rejects.toThrow();
    expect(to.get(PATH)!.metadata.annotations?.[COPIED_FROM_ANNOTATION]).toBeDefined();
    expect(from.get(PATH)?.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBe(MIGRATING);
    to.before = (method) => {
      if (method === 'POST') throw exceeded;
    };
    const draws: string[] = [];
    const refused: string[] = [];
    const retried = new ObjectMover({
      clock: new FakeClock(),
      statusSubresources: new StatusSubresources(),
      quota: { drawTo: (cell, namespace) => (draws.push(`${cell}/${namespace}`), Promise.resolve(false)) },
      onQuotaRefused: (namespace) => refused.push(namespace),
    });
    expect(await retried.move(move)).toMatchObject({ result: 'moved' });
    expect(draws).toEqual([]);
    expect(refused).toEqual([]);
    expect(from.get(PATH)?.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBe(MIGRATED);
  });
});

describe('ObjectMover: revision history', () => {
  /** A ReplicaSet of revision `revision`, controlled by the object with `ownerUid`. */
  const replicaSet = (
    name: string,
    revision: number,
    ownerUid: string,
    labels = { app: 'web' },
  ): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: 'shop',
      labels: { ...labels, 'pod-template-hash': name },
      annotations: { 'deployment.kubernetes.io/revision': String(revision), [FENCED_AT_ANNOTATION]: 'then' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: ownerUid, controller: true },
      ],
    },
    spec: { replicas: 3, selector: { matchLabels: { app: 'web' } } },
    status: { replicas: 3 },
  });

  it('quiesces a migrated old copy once: replicas 0, what it was recorded; read again after a conflict', async () => {
    const { from, mover, move } = setup();
    await mover.move(move);
    let raced = false;
    from.before = (method) => {
      if (method !== 'PATCH' || raced) return;
      raced = true; // the old cell's controller writes the status first
      const current = from.get(PATH)!;
      from.put(PATH, { ...current, status: { replicas: 1 } } as KubeObject);
    };

    expect(await mover.quiesce(move.from, ref, move.signal)).toBe(true);
    const old = from.get(PATH)!;
    expect(old.spec).toMatchObject({ replicas: 0 });
    expect(old.metadata.annotations?.[QUIESCED_ANNOTATION]).toBe('{"replicas":3}');
    expect(old.metadata.labels?.[REBALANCE_STATUS_LABEL]).toBe(MIGRATED);
    expect(await mover.quiesce(move.from, ref, move.signal)).toBe(false);
  });

  it("copies a Deployment's ReplicaSets to the new cell, newest first, owned by the new copy and scaled to 0", async () => {
    const { from, to, mover, move } = setup();
    const oldUid = from.get(PATH)!.metadata.uid!;
    from.put(`${REPLICA_SETS}/web-1`, replicaSet('web-1', 1, oldUid));
    from.put(`${REPLICA_SETS}/web-2`, replicaSet('web-2', 2, oldUid));
    // Same labels, another controller: not this Deployment's history.
    from.put(`${REPLICA_SETS}/other-1`, replicaSet('other-1', 1, 'another-uid'));
    await mover.move(move);
    expectMoved(from, to);
    const newUid = to.get(PATH)!.metadata.uid;
    expect(to.writes.filter((write) => write.path === REPLICA_SETS).length).toBe(2);
    expect(to.writes.findIndex((write) => write.path === REPLICA_SETS)).toBeGreaterThan(
      to.writes.findIndex((write) => write.path === '/apis/apps/v1/namespaces/shop/deployments'),
    );
    expect(to.get(`${REPLICA_SETS}/other-1`)).toBeUndefined();
    for (const [name, revision] of [
      ['web-2', '2'],
      ['web-1', '1'],
    ] as const) {
      const copy = to.get(`${REPLICA_SETS}/${name}`)!;
      expect(copy.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: 'web',
          uid: newUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(copy.metadata.labels).toEqual({ app: 'web', 'pod-template-hash': name });
      // Its revision travels; the fence marks the old cell's controller copied onto it do not.
      expect(copy.metadata.annotations).toEqual({ 'deployment.kubernetes.io/revision': revision });
      expect(copy.spec).toEqual({ replicas: 0, selector: { matchLabels: { app: 'web' } } });
      expect((copy as { status?: unknown }).status).toBeUndefined();
    }
  });

  it('keeps what the new cell already holds under a name (its controller made the current one first)', async () => {
    const { from, to, mover, move } = setup();
    const oldUid = from.get(PATH)!.metadata.uid!;
    from.put(`${REPLICA_SETS}/web-1`, replicaSet('web-1', 1, oldUid));
    from.put(`${REPLICA_SETS}/web-2`, replicaSet('web-2', 2, oldUid));
    const made = to.put(`${REPLICA_SETS}/web-2`, replicaSet('web-2', 1, 'new-cell-copy'));
    await mover.move(move);
    expectMoved(from, to);
    expect(to.get(`${REPLICA_SETS}/web-2`)).toEqual(made);
    expect(to.get(`${REPLICA_SETS}/web-1`)!.metadata.ownerReferences).toHaveLength(1);
  });

  it("copies a StatefulSet's ControllerRevisions; resources without a history copy nothing", async () => {
    const statefulSets = { group: 'apps', version: 'v1', resource: 'statefulsets' };
    const from = new FakeCell('cell-1');
    const to = new FakeCell('cell-2');
    const setPath = '/apis/apps/v1/namespaces/shop/statefulsets/db';
    const old = from.put(setPath, {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'shop' },
      spec: { selector: { matchLabels: { app: 'db' } } },
    });
    from.put('/apis/apps/v1/namespaces/shop/controllerrevisions/db-abc', {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name: 'db-abc',
        namespace: 'shop',
        labels: { app: 'db' },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: old.metadata.uid, controller: true },
        ],
      },
      data: { spec: { template: {} } },
      revision: 3,
    });
    const mover = new ObjectMover({ clock: new FakeClock(), statusSubresources: new StatusSubresources() });
    await mover.move({
      ref: { resource: statefulSets, namespace: 'shop', name: 'db' },
      from: { id: 'cell-1', client: from },
      to: { id: 'cell-2', client: to },
      signal: new AbortController().signal,
      log: memoryLogger().logger,
    });
    const revision = to.get('/apis/apps/v1/namespaces/shop/controllerrevisions/db-abc')!;
    expect(revision).toMatchObject({ data: { spec: { template: {} } }, revision: 3 });
    expect(revision.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'StatefulSet', uid: to.get(setPath)!.metadata.uid, controller: true }),
    ]);

    const { from: cells, mover: configMapMover, move } = setup();
    const configMaps = { group: '', version: 'v1', resource: 'configmaps' };
    cells.put('/api/v1/namespaces/shop/configmaps/web', { metadata: { name: 'web', namespace: 'shop' } });
    await configMapMover.move({ ...move, ref: { resource: configMaps, namespace: 'shop', name: 'web' } });
    expect(cells.reads).toEqual(['/api/v1/namespaces/shop/configmaps/web']);
  });
});

describe('contentOf', () => {
  it('ignores status, versions and managed fields, and key order', () => {
    const a = deployment();
    const b = { ...deployment(), status: { replicas: 0 } } as KubeObject;
    b.metadata = { ...b.metadata, resourceVersion: '9', managedFields: [] };
    b.spec = { selector: { matchLabels: { app: 'web' } }, replicas: 3 };
    expect(contentOf(b)).toBe(contentOf(a));
    expect(contentOf({ ...a, spec: { replicas: 4 } })).not.toBe(contentOf(a));
    expect(contentOf({ ...a, metadata: { ...a.metadata, labels: { app: 'x' } } })).not.toBe(contentOf(a));
  });
});
