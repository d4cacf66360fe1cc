import { changesShardBy } from './shard-by-writes.ts';

const SHARD_BY = 'cellfed.io/shard-by';
const namespace = (labels?: Record<string, string | null>) =>
  Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', labels } }));

describe('changesShardBy', () => {
  const stored = { team: 'a', [SHARD_BY]: 'namespace' };

  it('tells a create, an update and the patches that set, change or remove the label', () => {
    expect(
      changesShardBy('POST', 'application/json', namespace({ [SHARD_BY]: 'namespace' }), undefined),
    ).toBe(true);
    expect(changesShardBy('POST', 'application/json', namespace({ team: 'a' }), undefined)).toBe(false);
    // An update that sends back what it read changes nothing; one without it removes it.
    expect(changesShardBy('PUT', 'application/json', namespace(stored), stored)).toBe(false);
    expect(changesShardBy('PUT', 'application/json', namespace({ team: 'b' }), stored)).toBe(true);
    const merge = (text: string) =>
      changesShardBy('PATCH', 'application/merge-patch+json', Buffer.from(text), stored);
    expect(merge(`{"metadata":{"labels":{"cellfed.io\\u002fshard-by":"name"}}}`)).toBe(true);
    expect(merge(`{"metadata":{"labels":{"cellfed.io/shard-by":null}}}`)).toBe(true);
    expect(merge('{"metadata":{"labels":null}}')).toBe(true);
    expect(merge('{"metadata":{"labels":{"team":"b"}}}')).toBe(false);
    expect(
      changesShardBy(
        'PATCH',
        'application/strategic-merge-patch+json',
        Buffer.from('{"metadata":{"labels":{"$patch":"replace","team":"a"}}}'),
        stored,
      ),
    ).toBe(true);
  });

  it('counts any JSON patch of the label, the labels map, the metadata or the whole object', () => {
    const json = (ops: unknown[]) =>
      changesShardBy('PATCH', 'application/json-patch+json', Buffer.from(JSON.stringify(ops)), stored);
    expect(json([{ op: 'replace', path: '/metadata/labels/cellfed.io~1shard-by', value: 'name' }])).toBe(
      true,
    );
    expect(json([{ op: 'copy', from: '/metadata/labels', path: '/metadata/annotations' }])).toBe(true);
    expect(json([{ op: 'add', path: '/metadata/labels', value: { team: 'a' } }])).toBe(true);
    expect(json([{ op: 'add', path: '/metadata/labels/team', value: 'b' }])).toBe(false);
  });
});
