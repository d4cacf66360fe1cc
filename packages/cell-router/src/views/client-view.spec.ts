import { HELD_OWNERS_ANNOTATION, ORIGIN_CREATED_ANNOTATION, ORIGIN_UID_ANNOTATION } from '@cellfed/api';

import { REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import { formatHeldOwners } from '@cellfed/federation';

import { KEPT_ANNOTATIONS } from './cell-owners.ts';
import { mayNeedClientView, observedAs, showJson, showObject } from './client-view.ts';

const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-1', controller: true };
const job = { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'c-1' };

const configMap = (annotations: Record<string, string>, ownerReferences?: unknown[]) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'settings',
    namespace: 'demo',
    annotations,
    ...(ownerReferences ? { ownerReferences } : {}),
  },
  data: { a: '1' },
});

describe('client view', () => {
  it('puts held owner references back and drops the annotation (and an emptied annotations map)', () => {
    const object = configMap({ [HELD_OWNERS_ANNOTATION]: formatHeldOwners([deployment]) });
    showObject(object);
    expect(object.metadata).toEqual({ name: 'settings', namespace: 'demo', ownerReferences: [deployment] });
  });

  it('never shows the fence of a move: the rebalance-status label goes, the other labels stay', () => {
    const fenced = {
      metadata: { name: 'web', labels: { app: 'web', [REBALANCE_STATUS_LABEL]: 'migrating' } },
    };
    expect(mayNeedClientView(JSON.stringify(fenced))).toBe(true);
    expect(JSON.parse(showJson(JSON.stringify(fenced)))).toEqual({
      metadata: { name: 'web', labels: { app: 'web' } },
    });
    const onlyFence = { metadata: { name: 'web', labels: { [REBALANCE_STATUS_LABEL]: 'migrating' } } };
    showObject(onlyFence);
    expect(onlyFence.metadata).toEqual({ name: 'web' });
  });

  it('keeps native references first and other annotations as they are', () => {
    const object = configMap({ keep: 'me', [HELD_OWNERS_ANNOTATION]: formatHeldOwners([deployment]) }, [job]);
    showObject(object);
    expect(object.metadata.annotations).toEqual({ keep: 'me' });
    expect((object.metadata as { ownerReferences?: unknown }).ownerReferences).toEqual([job, deployment]);
  });

  it('shows list items, Table rows, single rows and leaves a hand-edited annotation visible', () => {
    const held = { [HELD_OWNERS_ANNOTATION]: formatHeldOwners([deployment]) };
    const list = { kind: 'ConfigMapList', items: [configMap(held), configMap({})] };
    showObject(list);
    expect(list.items[0]!.metadata).toHaveProperty('ownerReferences', [deployment]);
    const table = { kind: 'Table', rows: [{ cells: ['settings'], object: configMap(held) }] };
    showObject(table);
    expect(table.rows[0]!.object.metadata).toHaveProperty('ownerReferences', [deployment]);
    const row = { cells: ['settings'], object: configMap(held) };
    showObject(row);
    expect(row.object.metadata).toHaveProperty('ownerReferences', [deployment]);
    const broken = configMap({ [HELD_OWNERS_ANNOTATION]: '{nope' });
    showObject(broken);
    expect(broken.metadata.annotations).toEqual({ [HELD_OWNERS_ANNOTATION]: '{nope' });
  });

  it('finds every mark the view acts on, each behind the one prefix it searches for first', () => {
    for (const mark of [HELD_OWNERS_ANNOTATION, ...KEPT_ANNOTATIONS, REBALANCE_STATUS_LABEL]) {
      expect(mayNeedClientView(JSON.stringify({ metadata: { annotations: { [mark]: 'x' } } }))).toBe(true);
      expect(mayNeedClientView(Buffer.from(JSON.stringify({ metadata: { labels: { [mark]: 'x' } } })))).toBe(
        true,
      );
    }
    const other = {
      metadata: { labels: { 'cellfed.io/other': 'x' }, annotations: { 'cellfed.io/uidx': 'y' } },
    };
    expect(mayNeedClientView(JSON.stringify(other))).toBe(false);
    // A mark after other cellfed.io/ names is still found.
    const both = { ...other, metadata: { ...other.metadata, annotations: { [ORIGIN_UID_ANNOTATION]: 'u' } } };
    expect(mayNeedClientView(Buffer.from(JSON.stringify(both)))).toBe(true);
  });

  it('returns the same bytes when nothing is held, without parsing them', () => {
    const plain = Buffer.from(JSON.stringify(configMap({ a: 'b' })));
    expect(mayNeedClientView(plain)).toBe(false);
    expect(showJson(plain)).toBe(plain);
    const notJson = Buffer.from(`{"${HELD_OWNERS_ANNOTATION}": broken`);
    expect(showJson(notJson)).toBe(notJson);
    const held = JSON.stringify(configMap({ [HELD_OWNERS_ANNOTATION]: formatHeldOwners([deployment]) }));
    expect(JSON.parse(showJson(held))).toHaveProperty('metadata.ownerReferences', [deployment]);
  });

  it('shows a copy with the uid and creation time clients know, without the annotations that keep them', () => {
    const identity = {
      [ORIGIN_UID_ANNOTATION]: 'first',
      [ORIGIN_CREATED_ANNOTATION]: '2026-01-01T00:00:00Z',
    };
    const copy = {
      metadata: {
        name: 'web',
        uid: 'copy',
        creationTimestamp: '2026-11-25T10:00:00Z',
        annotations: identity,
      },
    };
    const json = JSON.stringify(copy);
    expect(mayNeedClientView(json)).toBe(true);
    expect(JSON.parse(showJson(json)).metadata).toEqual({
      name: 'web',
      uid: 'first',
      creationTimestamp: '2026-01-01T00:00:00Z',
    });
    const annotated = {
      metadata: {
        ...copy.metadata,
        annotations: { ...identity, 'cellfed.io/copied-from': 'c/u', team: 'a' },
      },
    };
    showObject(annotated);
    expect(annotated.metadata.annotations).toEqual({ team: 'a' });
    // A Table row's object, and a watch event's.
    const row = { cells: ['web'], object: structuredClone(copy) };
    showObject(row);
    expect(row.object.metadata.uid).toBe('first');
    // What a cell's controllers made inherits these annotations (a Deployment's ReplicaSet): not its own.
    const made = structuredClone(copy);
    showObject(made, { copies: false });
    expect(made.metadata.uid).toBe('copy');
    expect(made.metadata).not.toHaveProperty('annotations');
  });

  describe('a copy in a Table', () => {
    const first = '2026-11-20T10:00:00Z';
    const stored = '2026-11-25T09:58:00Z';
    const now = () => Date.parse('2026-11-25T10:00:00Z');
    const object = () => ({
      kind: 'PartialObjectMetadata',
      metadata: {
        name: 'web',
        uid: 'copy',
        creationTimestamp: stored,
        annotations: { [ORIGIN_UID_ANNOTATION]: 'first', [ORIGIN_CREATED_ANNOTATION]: first },
      },
    });
    const columnDefinitions = [
      { name: 'Name', type: 'string', format: 'name' },
      { name: 'Ready', type: 'string', format: '' },
      { name: 'Age', type: 'string', format: '' },
      { name: 'Created', type: 'date', format: '' },
    ];

    it('prints the Age from the first creation and replaces the copy’s timestamp in date columns', () => {
      const table = {
        kind: 'Table',
        columnDefinitions,
        rows: [{ cells: ['web', '1/1', '2m', stored], object: object() }],
      };
      showObject(table, { now });
      expect(table.rows[0]!.cells).toEqual(['web', '1/1', '5d', first]);
      expect(table.rows[0]!.object.metadata.creationTimestamp).toBe(first);
    });

    it('uses the columns it is given for rows without their Table (a merged list, a later watch event)', () => {
      const row = { cells: ['web', '1/1', '2m', stored], object: object() };
      showObject(row, { now, columns: { dates: [3], age: 2 } });
      expect(row.cells).toEqual(['web', '1/1', '5d', first]);
      const alone = { cells: ['web', '1/1', '2m', stored], object: object() };
      showObject(alone, { now });
      expect(alone.cells).toEqual(['web', '1/1', '2m', stored]);
    });

    it('leaves an object that is not a copy, and what the cells’ controllers made, as the cell printed them', () => {
      const original = object();
      original.metadata.creationTimestamp = first;
      const table = {
        kind: 'Table',
        columnDefinitions,
        rows: [{ cells: ['web', '1/1', '5d', first], object: original }],
      };
      showObject(table, { now: () => 0 });
      expect(table.rows[0]!.cells).toEqual(['web', '1/1', '5d', first]);
      const made = {
        kind: 'Table',
        columnDefinitions,
        rows: [{ cells: ['web', '1/1', '2m', stored], object: object() }],
      };
      showObject(made, { now, copies: false });
      expect(made.rows[0]!.cells).toEqual(['web', '1/1', '2m', stored]);
    });
  });
});

describe('showObject: a copy’s generation', () => {
  it('shows the generation clients knew and moves every observedGeneration of the status with it', () => {
    const object = {
      metadata: { name: 'web', generation: 3, annotations: { 'cellfed.io/generation': '7:2', team: 'a' } },
      status: {
        observedGeneration: 3,
        conditions: [{ type: 'Ready', observedGeneration: 2 }, { type: 'Other' }],
      },
    };
    showObject(object);
    expect(object).toEqual({
      metadata: { name: 'web', generation: 8, annotations: { team: 'a' } },
      status: {
        observedGeneration: 8,
        conditions: [{ type: 'Ready', observedGeneration: 7 }, { type: 'Other' }],
      },
    });
  });

  it('leaves what cells make (which inherits its owner’s annotations) as stored', () => {
    const replicaSet = {
      metadata: { name: 'web-1', generation: 1, annotations: { 'cellfed.io/generation': '7:2' } },
      status: { observedGeneration: 1 },
    };
    showObject(replicaSet, { copies: false });
    expect(replicaSet.metadata.generation).toBe(1);
    expect(replicaSet.status.observedGeneration).toBe(1);
  });
});

describe('observedAs', () => {
  it('keeps 0 (nothing observed), never goes below 0, nor above the generation shown', () => {
    expect(observedAs(0, 5, 8)).toBe(0);
    expect(observedAs(3, 5, 8)).toBe(8);
    expect(observedAs(1, -1, 1)).toBe(0);
    // A status copied from the old copy, in its count, before the new cell observed the copy.
    expect(observedAs(30, 26, 28)).toBe(28);
  });
});
