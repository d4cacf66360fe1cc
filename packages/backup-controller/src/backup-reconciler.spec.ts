import {
  BACKUP_CELL_LABEL,
  BACKUP_SOURCE_ANNOTATION,
  CELL_BACKUPS,
  COPIED_FROM_ANNOTATION,
  FENCED_AT_ANNOTATION,
  FOLLOWER_LABEL,
  HELD_OWNERS_ANNOTATION,
  ORIGIN_CREATED_ANNOTATION,
  ORIGIN_UID_ANNOTATION,
  PRIMARY_CELL_LABEL,
  PROMOTED_FROM_ANNOTATION,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
  parseCellSetSpec,
} from '@cellfed/api';
import { ApiError } from '@cellfed/controller-kit';
import { FakeCell, FakeClock, fakeCopies, memoryLogger, metricValue } from '@cellfed/controller-kit/testing';
import { REBALANCE_STATUS_LABEL, type CellState } from '@cellfed/hashing';
import { Registry } from 'prom-client';
import {
  compileCellSet,
  type CellSetGeneration,
  type KubeObject,
  backedUpObject,
  cellBackupName,
  legacyCellBackupName,
  formatObjectKey,
  objectKeyOf,
  type CellularObjectRef,
} from '@cellfed/federation';

import { BackupMetrics, LagClock } from './backup-metrics.ts';
import { BackupReconciler } from './backup-reconciler.ts';

const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };
const objectPath = (name: string) => `/apis/apps/v1/namespaces/shop/deployments/${name}`;
const backupPath = (name: string) =>
  `/apis/cells.cellfed.io/v1alpha1/namespaces/cellfed-backups/cellbackups/${cellBackupName(refOf(name))}`;
const refOf = (name: string): CellularObjectRef => ({ resource: DEPLOYMENTS, namespace: 'shop', name });
const deployment = (name: string, replicas = 1): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'shop' },
  spec: { replicas },
});

function federation(states: Record<string, CellState>, generation = 1): CellSetGeneration {
  const spec = parseCellSetSpec({
    cells: Object.entries(states).map(([id, state]) => ({ id, state, kubeconfigSecretRef: { name: id } })),
  });
  return compileCellSet(spec, generation);
}

function setUp(states: Record<string, CellState>) {
  const cells = ['a', 'b', 'c'].map((id) => new FakeCell(id));
  const byId = new Map(cells.map((cell) => [cell.id, cell]));
  const registry = new Registry();
  const metrics = new BackupMetrics(registry);
  const lag = new LagClock();
  const clock = new FakeClock();
  let current = federation(states);
  let synced = true;
  const objects = fakeCopies(cells, DEPLOYMENTS);
  const backups = fakeCopies(cells, CELL_BACKUPS);
  const reconciler = new BackupReconciler({
    federation: () => current,
    objects: { ...objects, synced: () => synced },
    backups,
    cell: (id) => {
      const cell = byId.get(id);
      return cell && { client: cell };
    },
    namespaceLabels: () => undefined,
    metrics,
    lag,
    clock,
  });
  const reconcile = (name: string) =>
    reconciler.reconcile({
      key: objectKeyOf(refOf(name)),
      lane: 'high',
      signal: new AbortController().signal,
      log: memoryLogger().logger,
    });
  /** Where the ring puts a key now, and its backup cell. */
  const placement = (name: string) => {
    const key = current.table.keyOf(refOf(name));
    const primary = current.table.route(key).oldCell;
    return { primary, backup: current.table.backupOf(key, primary)! };
  };
  const backupsOf = (name: string) => cells.filter((cell) => cell.get(backupPath(name)));
  return {
    cells: byId,
    registry,
    lag,
    clock,
    reconcile,
    placement,
    backupsOf,
    setStates: (next: Record<string, CellState>) => (current = federation(next, current.generation + 1)),
    unsync: () => (synced = false),
  };
}

const ALL_NORMAL = { a: 'Normal', b: 'Normal', c: 'Normal' } as const;

/** A CellBackup at `at`'s name that says it holds `holds`'s key: a collision, when they differ. */
const handMade = (at: string, holds: string, name = cellBackupName(refOf(at))): KubeObject => ({
  metadata: {
    name,
    namespace: 'cellfed-backups',
    annotations: { [BACKUP_SOURCE_ANNOTATION]: formatObjectKey(refOf(holds)) },
  },
});

/** A backup as the controller wrote it before `spec.data`: the object as a subtree, no format mark. */
const earlierForm = (object: KubeObject, primary: string, backup: string): KubeObject => ({
  apiVersion: 'cells.cellfed.io/v1alpha1',
  kind: 'CellBackup',
  metadata: {
    name: cellBackupName(refOf(object.metadata.name!)),
    namespace: 'cellfed-backups',
    labels: { [BACKUP_CELL_LABEL]: backup, [PRIMARY_CELL_LABEL]: primary },
    annotations: {
      [BACKUP_SOURCE_ANNOTATION]: formatObjectKey(refOf(object.metadata.name!)),
      [SOURCE_RESOURCE_VERSION_ANNOTATION]: object.metadata.resourceVersion ?? '',
    },
  },
  spec: { source: { ...DEPLOYMENTS, namespace: 'shop', name: object.metadata.name }, object },
});

describe('BackupReconciler', () => {
  it('keeps a copy of the object in its backup cell, naming both cells and the version it copies', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    const stored = t.cells.get(primary)!.put(objectPath('web'), deployment('web'));
    t.lag.seen(formatObjectKey(refOf('web')), t.clock.now());
    await t.clock.advance(30);

    await t.reconcile('web');

    expect(t.backupsOf('web').map((cell) => cell.id)).toEqual([backup]);
    const written = t.cells.get(backup)!.get(backupPath('web'))!;
    expect(written.metadata.labels).toEqual({ [BACKUP_CELL_LABEL]: backup, [PRIMARY_CELL_LABEL]: primary });
    expect(written.metadata.annotations?.[SOURCE_RESOURCE_VERSION_ANNOTATION]).toBe(
      stored.metadata.resourceVersion,
    );
    expect(backedUpObject(written as { spec?: { data?: unknown } })?.spec).toEqual({ replicas: 1 });
    const lag = await t.registry.getSingleMetric('cellfed_backup_replication_lag_seconds')!.get();
    const sum = lag.values.find((value) => (value as { metricName?: string }).metricName?.endsWith('_sum'));
    expect(sum?.value).toBeCloseTo(0.03);
  });

  it('writes nothing while the backup holds the version served, and follows every change', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    t.cells.get(primary)!.put(objectPath('web'), deployment('web'));
    await t.reconcile('web');
    const writes = t.cells.get(backup)!.writes.length;
    await t.reconcile('web');
    expect(t.cells.get(backup)!.writes.length).toBe(writes);

    t.cells.get(primary)!.put(objectPath('web'), deployment('web', 5));
    await t.reconcile('web');
    const written = t.cells.get(backup)!.get(backupPath('web'))!;
    expect(backedUpObject(written as { spec?: { data?: unknown } })?.spec).toEqual({ replicas: 5 });
  });

  it('creates a backup, then replaces it on the version it knows; a stale version costs a read and a write', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    const cell = t.cells.get(backup)!;
    t.cells.get(primary)!.put(objectPath('web'), deployment('web'));
    await t.reconcile('web');
    t.cells.get(primary)!.put(objectPath('web'), deployment('web', 2));
    await t.reconcile('web');
    expect(cell.writes).toEqual([
      { method: 'POST', path: '/apis/cells.cellfed.io/v1alpha1/namespaces/cellfed-backups/cellbackups' },
      { method: 'PUT', path: backupPath('web') },
    ]);

    // Someone else's write moved the backup on since the cache saw it: one Conflict, then on the fresh version.
    let conflicts = 1;
    cell.before = (method) => {
      if (method === 'PUT' && conflicts-- > 0)
        throw new ApiError(
          409,
          { code: 409, reason: 'Conflict', message: 'the object has been modified' },
          'PUT',
        );
    };
    t.cells.get(primary)!.put(objectPath('web'), deployment('web', 3));
    await t.reconcile('web');
    expect(backedUpObject(cell.get(backupPath('web')) as { spec?: { data?: unknown } })?.spec).toEqual({
      replicas: 3,
    });

    // Deleted behind the cache: the replace finds nothing (404), so it is created again.
    let gone = 1;
    cell.before = (method, path) => {
      if (method === 'PUT' && gone-- > 0) {
        cell.objects.delete(path);
        throw new ApiError(404, { code: 404, reason: 'NotFound', message: 'not found' }, 'PUT');
      }
    };
    t.cells.get(primary)!.put(objectPath('web'), deployment('web', 4));
    await t.reconcile('web');
    expect(backedUpObject(cell.get(backupPath('web')) as { spec?: { data?: unknown } })?.spec).toEqual({
      replicas: 4,
    });
  });

  it('moves a backup whose ring changed: the stale one is deleted', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    t.cells.get(primary)!.put(objectPath('web'), deployment('web'));
    const elsewhere = ['a', 'b', 'c'].find((id) => id !== primary && id !== backup)!;
    t.cells.get(elsewhere)!.put(backupPath('web'), handMade('web', 'web'));

    await t.reconcile('web');

    expect(t.backupsOf('web').map((cell) => cell.id)).toEqual([backup]);
  });

  it('backs up nothing its cell’s controllers made (a CronJob’s Job), and drops a backup it had', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    const made = deployment('web');
    made.metadata.ownerReferences = [
      { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'u-1', controller: true },
    ];
    t.cells.get(primary)!.put(objectPath('web'), made);
    t.cells.get(backup)!.put(backupPath('web'), handMade('web', 'web'));

    await t.reconcile('web');

    expect(t.backupsOf('web')).toEqual([]);
  });

  it('deletes the backups of a deleted object', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary } = t.placement('web');
    t.cells.get(primary)!.put(objectPath('web'), deployment('web'));
    await t.reconcile('web');
    t.cells.get(primary)!.objects.delete(objectPath('web'));

    await t.reconcile('web');

    expect(t.backupsOf('web')).toEqual([]);
  });

  it('promotes the backup when the object’s cell is Down, then backs the object up anew', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    const original = deployment('web', 3);
    original.metadata.labels = { app: 'web', [REBALANCE_STATUS_LABEL]: 'migrating' };
    t.cells.get(primary)!.put(objectPath('web'), original);
    await t.reconcile('web');
    // The cell fails: its objects are out of reach, the CellSet marks it Down.
    t.cells.get(primary)!.objects.clear();
    t.setStates({ ...ALL_NORMAL, [primary]: 'Down' });
    expect(t.placement('web').primary).toBe(backup);
    const cachedVersion = t.cells.get(backup)!.get(backupPath('web'))!.metadata.resourceVersion;

    await t.reconcile('web');

    // The backup is read at the version the cache holds (from the apiserver's watch cache), not the latest.
    const backupCell = t.cells.get(backup)!;
    const backupRead = backupCell.reads.indexOf(backupPath('web'));
    expect(backupCell.readVersions[backupRead]).toBe(cachedVersion);
    const promoted = t.cells.get(backup)!.get(objectPath('web'))!;
    expect(promoted.spec).toEqual({ replicas: 3 });
    expect(promoted.metadata.labels).toEqual({ app: 'web' });
    expect(promoted.metadata.uid).toMatch(new RegExp(`^${backup}-`));
    // Two requests: the backup read, the object created; the backup goes with the next look.
    expect(t.cells.get(backup)!.get(backupPath('web'))).toBeDefined();
    expect(await metricValue(t.registry, 'cellfed_backup_operations_total', { operation: 'promoted' })).toBe(
      1,
    );

    await t.reconcile('web');
    expect(t.cells.get(backup)!.get(backupPath('web'))).toBeUndefined();
    const next = t.placement('web').backup;
    expect(next).not.toBe(primary);
    expect(t.backupsOf('web').map((cell) => cell.id)).toEqual([next]);
  });

  it('creates the object marked, then commits it: its field managers back and the mark gone, in one write', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    const managers = [{ manager: 'helm', operation: 'Apply', apiVersion: 'apps/v1' }];
    t.cells.get(primary)!.put(objectPath('web'), {
      ...deployment('web', 3),
      metadata: { name: 'web', namespace: 'shop', managedFields: managers },
    });
    await t.reconcile('web');
    t.cells.get(primary)!.objects.clear();
    t.setStates({ ...ALL_NORMAL, [primary]: 'Down' });
    const cell = t.cells.get(backup)!;
    const writesBefore = cell.writes.length;
    const created: KubeObject[] = [];
    cell.before = (method, path, body) => {
      if (method === 'POST' && path.endsWith('/deployments'))
        created.push(structuredClone(body as KubeObject));
    };

    await t.reconcile('web');

    // Created marked (the router refuses writes to it meanwhile), then committed.
    expect(created[0]?.metadata.annotations?.[PROMOTED_FROM_ANNOTATION]).toBe(primary);
    const promoted = cell.get(objectPath('web'))!;
    expect(promoted.metadata.managedFields).toEqual(managers);
    expect(promoted.metadata.annotations?.[PROMOTED_FROM_ANNOTATION]).toBeUndefined();
    expect(cell.writes.slice(writesBefore)).toEqual([
      { method: 'POST', path: '/apis/apps/v1/namespaces/shop/deployments' },
      { method: 'PATCH', path: objectPath('web') },
    ]);
    // Committed once: the object's next look writes its new backup and removes the old one, nothing more to it.
    await t.reconcile('web');
    expect(cell.writes.filter((write) => write.path === objectPath('web'))).toHaveLength(1);
  });

  it('keeps what the object is through a promotion (its first uid, held owners), not the marks of a move', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    const moving = deployment('web', 3);
    moving.metadata.uid = 'uid-in-a';
    moving.metadata.creationTimestamp = '2026-11-01T00:00:00Z';
    moving.metadata.labels = { app: 'web', [REBALANCE_STATUS_LABEL]: 'migrating' };
    moving.metadata.annotations = {
      [HELD_OWNERS_ANNOTATION]: '[{"kind":"Shop","name":"main","uid":"u0"}]',
      [COPIED_FROM_ANNOTATION]: 'c/uid-in-c',
      [FENCED_AT_ANNOTATION]: '2026-11-26T00:00:00Z',
      note: 'kept',
    };
    t.cells.get(primary)!.put(objectPath('web'), moving);
    await t.reconcile('web');
    t.cells.get(primary)!.objects.clear();
    t.setStates({ ...ALL_NORMAL, [primary]: 'Down' });

    await t.reconcile('web');

    const promoted = t.cells.get(backup)!.get(objectPath('web'))!;
    expect(promoted.metadata.labels).toEqual({ app: 'web' });
    expect(promoted.metadata.annotations).toEqual({
      [HELD_OWNERS_ANNOTATION]: '[{"kind":"Shop","name":"main","uid":"u0"}]',
      [ORIGIN_UID_ANNOTATION]: 'uid-in-a',
      [ORIGIN_CREATED_ANNOTATION]: '2026-11-01T00:00:00Z',
      note: 'kept',
    });
  });

  it('commits a promotion that stopped after creating the object, before its backup there goes', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    const managers = [{ manager: 'helm', operation: 'Apply', apiVersion: 'apps/v1' }];
    t.cells.get(primary)!.put(objectPath('web'), {
      ...deployment('web'),
      metadata: { name: 'web', namespace: 'shop', managedFields: managers },
    });
    await t.reconcile('web');
    t.cells.get(primary)!.objects.clear();
    t.setStates({ ...ALL_NORMAL, [primary]: 'Down' });
    const created = deployment('web');
    created.metadata.annotations = { [PROMOTED_FROM_ANNOTATION]: primary };
    t.cells.get(backup)!.put(objectPath('web'), created);

    await t.reconcile('web');

    const committed = t.cells.get(backup)!.get(objectPath('web'))!;
    expect(committed.metadata.annotations?.[PROMOTED_FROM_ANNOTATION]).toBeUndefined();
    expect(committed.metadata.managedFields).toEqual(managers);
    expect(t.cells.get(backup)!.get(backupPath('web'))).toBeDefined();

    // Its next look backs it up anew and removes the backup it was promoted from.
    await t.reconcile('web');
    expect(t.cells.get(backup)!.get(backupPath('web'))).toBeUndefined();
    expect(t.backupsOf('web').map((cell) => cell.id)).toEqual([t.placement('web').backup]);
  });

  it('promotes over a follower copy of the object in the backup cell, which the object replaces', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    t.cells.get(primary)!.put(objectPath('web'), deployment('web', 3));
    await t.reconcile('web');
    t.cells.get(primary)!.objects.clear();
    t.setStates({ ...ALL_NORMAL, [primary]: 'Down' });
    const follower = deployment('web', 1);
    follower.metadata.labels = { [FOLLOWER_LABEL]: primary };
    t.cells.get(backup)!.put(objectPath('web'), follower);

    await t.reconcile('web');

    const promoted = t.cells.get(backup)!.get(objectPath('web'))!;
    expect(promoted.spec).toEqual({ replicas: 3 });
    expect(promoted.metadata.labels?.[FOLLOWER_LABEL]).toBeUndefined();
  });

  it('writes a backup of the earlier form (spec.object) anew, although it holds the version served', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    const stored = t.cells.get(primary)!.put(objectPath('web'), deployment('web', 2));
    t.cells.get(backup)!.put(backupPath('web'), earlierForm(stored, primary, backup));

    await t.reconcile('web');

    const written = t.cells.get(backup)!.get(backupPath('web'))! as KubeObject & { spec: { data?: string } };
    expect(written.spec).not.toHaveProperty('object');
    expect(JSON.parse(written.spec.data!)).toMatchObject({ spec: { replicas: 2 } });
    const writes = t.cells.get(backup)!.writes.length;
    await t.reconcile('web');
    expect(t.cells.get(backup)!.writes.length).toBe(writes);
  });

  it('promotes a backup of the earlier form', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    const stored = t.cells.get(primary)!.put(objectPath('web'), deployment('web', 4));
    t.cells.get(backup)!.put(backupPath('web'), earlierForm(stored, primary, backup));
    t.cells.get(primary)!.objects.clear();
    t.setStates({ ...ALL_NORMAL, [primary]: 'Down' });

    await t.reconcile('web');

    expect(t.cells.get(backup)!.get(objectPath('web'))?.spec).toEqual({ replicas: 4 });
  });

  it('fails, with its code, to promote a backup that holds nothing readable, and creates nothing', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    const unreadable = earlierForm(deployment('web'), primary, backup);
    t.cells.get(backup)!.put(backupPath('web'), { ...unreadable, spec: { data: '{"truncated": ' } });
    t.setStates({ ...ALL_NORMAL, [primary]: 'Down' });

    await expect(t.reconcile('web')).rejects.toMatchObject({ code: 'CELLFED_BACKUP_UNREADABLE_BACKUP' });
    expect(t.cells.get(backup)!.get(objectPath('web'))).toBeUndefined();
  });

  it('never writes over, deletes or promotes a backup at its name that holds another object (a collision forced)', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    t.cells.get(primary)!.put(objectPath('web'), deployment('web'));
    const victims = () => t.cells.get(backup)!.get(backupPath('web'));
    t.cells.get(backup)!.put(backupPath('web'), handMade('web', 'victim'));
    const before = victims();

    await expect(t.reconcile('web')).rejects.toMatchObject({
      code: 'CELLFED_BACKUP_NAME_TAKEN',
      message: expect.stringContaining('deployments.apps/shop/victim'),
    });
    // Deleted, the object takes nothing with it; its cell Down, nothing is promoted from another's backup.
    t.cells.get(primary)!.objects.delete(objectPath('web'));
    await t.reconcile('web');
    t.setStates({ ...ALL_NORMAL, [primary]: 'Down' });
    await t.reconcile('web');
    expect(victims()).toEqual(before);
    expect(t.cells.get(backup)!.writes).toEqual([]);
    expect(t.cells.get(backup)!.get(objectPath('web'))).toBeUndefined();
  });

  it('rewrites a backup found under its legacy name under the current one, and promotes it meanwhile', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    const legacyPath = backupPath('web').replace(
      cellBackupName(refOf('web')),
      legacyCellBackupName(refOf('web')),
    );
    const legacy = {
      ...earlierForm(deployment('web'), primary, backup),
      metadata: {
        ...earlierForm(deployment('web'), primary, backup).metadata,
        name: legacyCellBackupName(refOf('web')),
      },
    };
    // Its cell Down before the controller wrote it anew: the legacy backup is promoted.
    t.cells.get(backup)!.put(legacyPath, legacy);
    t.setStates({ ...ALL_NORMAL, [primary]: 'Down' });
    await t.reconcile('web');
    expect(t.cells.get(backup)!.get(objectPath('web'))).toMatchObject({ metadata: { name: 'web' } });

    // Served again: backed up under the current name, the legacy one deleted.
    const fresh = setUp(ALL_NORMAL);
    fresh.cells.get(primary)!.put(objectPath('web'), deployment('web'));
    fresh.cells.get(backup)!.put(legacyPath, legacy);
    await fresh.reconcile('web');
    expect(fresh.cells.get(backup)!.get(backupPath('web'))).toBeDefined();
    expect(fresh.cells.get(backup)!.get(legacyPath)).toBeUndefined();
  });

  it('decides nothing while a cell it needs is not listed', async () => {
    const t = setUp(ALL_NORMAL);
    const { primary, backup } = t.placement('web');
    t.cells.get(primary)!.put(objectPath('web'), deployment('web'));
    t.unsync();

    expect(await t.reconcile('web')).toEqual({ requeueAfterMs: expect.any(Number) });
    expect(t.cells.get(backup)!.writes).toEqual([]);
  });
});
