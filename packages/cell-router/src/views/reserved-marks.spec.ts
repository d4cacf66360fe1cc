import { markWrites, needsStoredObject, refusedMarks, reservedMarksStatus } from './reserved-marks.ts';

const object = (labels: Record<string, unknown>, annotations: Record<string, unknown> = {}) => ({
  metadata: { name: 'web', labels, annotations },
});

describe('markWrites', () => {
  it('finds cellfed’s marks among an object’s or a patch’s labels and annotations, and no client mark', () => {
    const body = object(
      { app: 'web', 'cellfed.io/followed-from': 'control-plane', 'cellfed.io/shard-by': 'namespace' },
      { 'cellfed.io/uid': 'spoofed', note: 'x' },
    );
    for (const shape of ['object', 'merge-patch', 'strategic-merge-patch', 'apply'] as const)
      expect(markWrites(shape, body)).toEqual([
        { map: 'labels', key: 'cellfed.io/followed-from', value: 'control-plane', at: 'metadata' },
        { map: 'annotations', key: 'cellfed.io/uid', value: 'spoofed', at: 'metadata' },
      ]);
    // A merge patch removes with null.
    expect(markWrites('merge-patch', object({ 'cellfed.io/rebalance-status': null }))).toEqual([
      { map: 'labels', key: 'cellfed.io/rebalance-status', value: null, at: 'metadata' },
    ]);
    expect(markWrites('object', { metadata: { name: 'web' } })).toEqual([]);
    expect(markWrites('object', 'not an object')).toEqual([]);
  });

  it('finds them in a JSON patch by path, by from, and in values put at the maps, the metadata or the root', () => {
    const ops = [
      { op: 'add', path: '/metadata/labels/cellfed.io~1rebalance-status', value: 'migrated' },
      { op: 'remove', path: '/metadata/annotations/cellfed.io~1copied-from' },
      { op: 'move', from: '/metadata/annotations/cellfed.io~1uid', path: '/metadata/annotations/shown' },
      { op: 'replace', path: '/metadata/labels', value: { 'cellfed.io/followed-from': 'x', app: 'web' } },
      { op: 'replace', path: '/metadata', value: { annotations: { 'cellfed.io/held-spec': '{}' } } },
      { op: 'add', path: '', value: object({ 'cellfed.io/mirrored-from': 'control-plane' }) },
      { op: 'test', path: '/metadata/labels/cellfed.io~1rebalance-status', value: 'migrating' },
      { op: 'add', path: '/metadata/labels/cellfed.io~1shard-by', value: 'namespace' },
      { op: 'replace', path: '/spec/replicas', value: 3 },
    ];
    expect(markWrites('json-patch', ops)).toEqual([
      { map: 'labels', key: 'cellfed.io/rebalance-status', value: 'migrated', at: 'metadata' },
      { map: 'annotations', key: 'cellfed.io/copied-from', value: null, at: 'metadata' },
      { map: 'annotations', key: 'cellfed.io/uid', value: null, at: 'metadata' },
      { map: 'labels', key: 'cellfed.io/followed-from', value: 'x', at: 'metadata' },
      { map: 'annotations', key: 'cellfed.io/held-spec', value: '{}', at: 'metadata' },
      { map: 'labels', key: 'cellfed.io/mirrored-from', value: 'control-plane', at: 'metadata' },
    ]);
    expect(markWrites('json-patch', { not: 'a list' })).toEqual([]);
  });
});

describe('markWrites in templates', () => {
  it('finds marks in the templates whose objects the cells make, with their field paths', () => {
    const statefulSet = {
      metadata: { name: 'db' },
      spec: {
        template: { metadata: { labels: { 'cellfed.io/rebalance-status': 'migrating', app: 'db' } } },
        volumeClaimTemplates: [
          { metadata: { name: 'data' } },
          { metadata: { name: 'logs', labels: { 'cellfed.io/followed-from': 'control-plane' } } },
        ],
      },
    };
    expect(markWrites('object', statefulSet)).toEqual([
      { map: 'labels', key: 'cellfed.io/rebalance-status', value: 'migrating', at: 'spec.template.metadata' },
      {
        map: 'labels',
        key: 'cellfed.io/followed-from',
        value: 'control-plane',
        at: 'spec.volumeClaimTemplates[1].metadata',
      },
    ]);
    expect(
      markWrites('json-patch', [
        {
          op: 'add',
          path: '/spec/volumeClaimTemplates/0/metadata/labels/cellfed.io~1followed-from',
          value: 'x',
        },
        {
          op: 'add',
          path: '/spec/template',
          value: { metadata: { annotations: { 'cellfed.io/uid': 'u' } } },
        },
        { op: 'replace', path: '/spec/template/metadata/labels', value: { 'cellfed.io/copied-from': 'a' } },
      ]),
    ).toEqual([
      {
        map: 'labels',
        key: 'cellfed.io/followed-from',
        value: 'x',
        at: 'spec.volumeClaimTemplates[0].metadata',
      },
      { map: 'annotations', key: 'cellfed.io/uid', value: 'u', at: 'spec.template.metadata' },
      { map: 'labels', key: 'cellfed.io/copied-from', value: 'a', at: 'spec.template.metadata' },
    ]);
  });

  it('refuses a template’s mark on an update too, whatever the object has', () => {
    const writes = markWrites('object', {
      spec: { template: { metadata: { labels: { 'cellfed.io/a': '1' } } } },
    });
    expect(refusedMarks(writes, { labels: { 'cellfed.io/a': '1' } })).toEqual(writes);
  });
});

describe('refusedMarks', () => {
  const writes = markWrites(
    'object',
    object(
      { 'cellfed.io/followed-from': 'control-plane' },
      { 'cellfed.io/uid': 'u-1', 'cellfed.io/copied-from': 'a' },
    ),
  );

  it('refuses every mark a create or patch names', () => {
    expect(refusedMarks(writes, undefined)).toEqual(writes);
  });

  it('lets an update send back what the object has, and its kept annotations whatever they say', () => {
    // The router puts the stored kept annotations back on an update (write-views.ts): never refused.
    expect(refusedMarks(writes, { labels: { 'cellfed.io/followed-from': 'control-plane' } })).toEqual([]);
    expect(refusedMarks(writes, { labels: { 'cellfed.io/followed-from': 'cell-2' } })).toEqual([writes[0]]);
    expect(refusedMarks(writes, {})).toEqual([writes[0]]);
  });
});

describe('reservedMarksStatus', () => {
  it('answers as kube-apiserver’s validation does: 422 Invalid, a cause per field', () => {
    const [one, two] = markWrites('object', object({ 'cellfed.io/a': '1', 'cellfed.io/b': '2' }));
    const single = reservedMarksStatus('Deployment', 'web', 'apps', [one!]);
    expect(single).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message:
        'Deployment.apps "web" is invalid: metadata.labels[cellfed.io/a]: Forbidden: the cellfed.io/ prefix is reserved for cellfed',
      details: { name: 'web', group: 'apps', kind: 'Deployment' },
    });
    const both = reservedMarksStatus('ConfigMap', 'settings', '', [one!, two!]);
    expect(both.message).toBe(
      'ConfigMap "settings" is invalid: [metadata.labels[cellfed.io/a]: Forbidden: the cellfed.io/ prefix is reserved for cellfed, metadata.labels[cellfed.io/b]: Forbidden: the cellfed.io/ prefix is reserved for cellfed]',
    );
    expect(both.details?.causes).toHaveLength(2);
  });
});

describe('needsStoredObject', () => {
  it('reads the object for a JSON patch that copies, moves, or replaces what holds marks, and for no other', () => {
    const needs = (op: string, path: string) => needsStoredObject('json-patch', [{ op, path, value: {} }]);
    expect(needs('add', '/metadata/labels/app')).toBe(false);
    expect(needs('replace', '/spec/replicas')).toBe(false);
    expect(needs('add', '/spec/template/spec/nodeSelector')).toBe(false);
    expect(needs('test', '/metadata')).toBe(false);
    for (const path of [
      '',
      '/metadata',
      '/metadata/labels',
      '/spec',
      '/spec/template',
      '/spec/volumeClaimTemplates/0',
    ])
      expect([path, needs('remove', path)]).toEqual([path, true]);
    expect(needsStoredObject('json-patch', [{ op: 'copy', from: '/data/a', path: '/data/b' }])).toBe(true);
    expect(needsStoredObject('merge-patch', { metadata: null })).toBe(false);
  });
});
