import { mergeOwnerList } from './owner-list-merge.ts';

const owner = (uid: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: `web-${uid}`,
  uid,
  ...extra,
});

describe('strategic merge of ownerReferences (merge key uid)', () => {
  const current = [owner('a'), owner('b')];

  it('merges an element into the one with its uid and adds new ones', () => {
    expect(mergeOwnerList(current, { list: [{ uid: 'b', controller: true }, owner('c')] })).toEqual([
      owner('a'),
      owner('b', { controller: true }),
      owner('c'),
    ]);
  });

  it('deletes with $patch: delete, replaces with $patch: replace, clears with null', () => {
    expect(mergeOwnerList(current, { list: [{ uid: 'a', $patch: 'delete' }] })).toEqual([owner('b')]);
    expect(mergeOwnerList(current, { list: [owner('c'), { $patch: 'replace' }] })).toEqual([owner('c')]);
    expect(mergeOwnerList(current, { list: null })).toEqual([]);
  });

  it('orders the result by $setElementOrder, unlisted elements last', () => {
    expect(
      mergeOwnerList(current, { list: [owner('c')], order: [{ uid: 'c' }, { uid: 'a' }] }).map((o) => o.uid),
    ).toEqual(['c', 'a', 'b']);
  });
});
