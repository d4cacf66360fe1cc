import { type KubeObject } from '@cellfed/federation';

import { CellularResources } from '../routing/cellular-resources.ts';
import { CellularKinds, type DiscoveredResource } from './cellular-kinds.ts';
import { OwnerUids, showOwnerUids } from './owner-uids.ts';

const APPS: DiscoveredResource[] = [
  { name: 'deployments', kind: 'Deployment', namespaced: true },
  { name: 'deployments/scale', kind: 'Scale', namespaced: true },
  { name: 'replicasets', kind: 'ReplicaSet', namespaced: true },
];

/** Cell `a` holds Deployment shop/web, moved there: uid `new-uid`, known to clients as `first-uid`. */
function fixture() {
  const reads: string[] = [];
  const discovered: string[] = [];
  const kinds = new CellularKinds(
    async (groupVersion) => {
      discovered.push(groupVersion);
      if (groupVersion !== 'apps/v1') throw new Error('not found');
      return APPS;
    },
    () => new CellularResources([{ group: 'apps', resource: 'deployments' }]),
  );
  const uids = new OwnerUids(kinds, async (cell, path): Promise<KubeObject | undefined> => {
    reads.push(`${cell} ${path}`);
    if (cell !== 'a' || path !== '/apis/apps/v1/namespaces/shop/deployments/web') return undefined;
    return { metadata: { name: 'web', uid: 'new-uid', annotations: { 'cellfed.io/uid': 'first-uid' } } };
  });
  return { uids, reads, discovered };
}

const replicaSet = (uid: string) => ({
  kind: 'ReplicaSet',
  metadata: {
    namespace: 'shop',
    name: 'web-5d8f',
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid, controller: true }],
  },
});
const ownerUid = (value: unknown) =>
  (value as ReturnType<typeof replicaSet>).metadata.ownerReferences[0]!.uid;

describe('OwnerUids', () => {
  it('shows an Event’s object by the uid clients know (core and events.k8s.io), in its own namespace', async () => {
    const { uids } = fixture();
    const about = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'shop',
      name: 'web',
      uid: 'new-uid',
    };
    const core = JSON.stringify({
      kind: 'Event',
      metadata: { namespace: 'shop', name: 'web.1' },
      involvedObject: about,
    });
    expect(JSON.parse(await showOwnerUids(uids, 'a', core))).toHaveProperty(
      'involvedObject.uid',
      'first-uid',
    );
    const modern = { kind: 'Event', metadata: { namespace: 'shop', name: 'web.2' }, regarding: { ...about } };
    expect(await uids.show('a', modern)).toBe(true);
    expect(modern.regarding.uid).toBe('first-uid');
    // Not the moved Deployment (another name): as the cell has it.
    const other = { kind: 'Event', involvedObject: { ...about, name: 'api', uid: 'x' } };
    expect(await uids.show('a', other)).toBe(false);
  });

  it('shows the uid clients know for a moved owner, and reads the owner once', async () => {
    const { uids, reads } = fixture();
    const shown = replicaSet('new-uid');
    expect(await uids.show('a', shown)).toBe(true);
    expect(ownerUid(shown)).toBe('first-uid');
    const again = replicaSet('new-uid');
    await uids.show('a', again);
    expect(ownerUid(again)).toBe('first-uid');
    expect(reads).toEqual(['a /apis/apps/v1/namespaces/shop/deployments/web']);
  });

  it('stores the cell’s uid back on a write, so the cell’s collector still finds the owner', async () => {
    const { uids } = fixture();
    const written = replicaSet('first-uid');
    expect(await uids.store('a', 'shop', written)).toBe(true);
    expect(ownerUid(written)).toBe('new-uid');
  });

  it('leaves references alone: of a kind that is not cellular, to an owner gone or made again, in other cells', async () => {
    const { uids, reads } = fixture();
    const pod = {
      metadata: {
        namespace: 'shop',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'rs-uid' }],
      },
    };
    expect(await uids.show('a', pod)).toBe(false);
    expect(reads).toEqual([]);
    const remade = replicaSet('older-uid');
    expect(await uids.show('a', remade)).toBe(false);
    expect(ownerUid(remade)).toBe('older-uid');
    expect(await uids.show('b', replicaSet('new-uid'))).toBe(false);
    const unknownGroup = {
      metadata: {
        namespace: 'shop',
        ownerReferences: [{ apiVersion: 'x.io/v1', kind: 'Thing', name: 't', uid: 'u' }],
      },
    };
    expect(await uids.show('a', unknownGroup)).toBe(false);
  });

  it('translates list items and Table rows, and leaves a text without owners as it is', async () => {
    const { uids, discovered } = fixture();
    const list = { kind: 'ReplicaSetList', items: [replicaSet('new-uid')] };
    await uids.show('a', list);
    expect(ownerUid(list.items[0])).toBe('first-uid');
    const table = { kind: 'Table', rows: [{ cells: ['web-5d8f'], object: replicaSet('new-uid') }] };
    await uids.show('a', table);
    expect(ownerUid(table.rows[0]!.object)).toBe('first-uid');
    const plain = Buffer.from('{"metadata":{"name":"x"}}');
    expect(await showOwnerUids(uids, 'a', plain)).toBe(plain);
    expect(JSON.parse(String(await showOwnerUids(uids, 'a', JSON.stringify(replicaSet('new-uid')))))).toEqual(
      replicaSet('first-uid'),
    );
    // Discovery once per group version, not per object.
    expect(discovered).toEqual(['apps/v1']);
  });

  it('asks nothing as the router for a reference a caller made up: a group the CellSet does not list, a path, too many', async () => {
    const { uids, reads, discovered } = fixture();
    const refs = [
      { apiVersion: 'v1?x=1', kind: 'Pod', name: 'p', uid: 'u' },
      { apiVersion: 'apps/../../api/v1/secrets', kind: 'Secret', name: 's', uid: 'u' },
      { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'u' },
      ...Array.from({ length: 40 }, (_, i) => ({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: `d-${i}`,
        uid: 'u',
      })),
    ];
    await uids.store('a', 'shop', {
      kind: 'Pod',
      metadata: { namespace: 'shop', name: 'x', ownerReferences: refs },
    });
    expect(discovered).toEqual(['apps/v1']);
    // Only the first 16 references are read, each once.
    expect(reads).toHaveLength(13);
  });

  it('reads as the router only for an Event’s object in the Event’s own namespace, boundedly, and not again soon', async () => {
    const { uids, reads } = fixture();
    const event = (name: string, namespace = 'shop') => ({
      kind: 'Event',
      metadata: { namespace: 'shop', name: `${name}.1` },
      involvedObject: { apiVersion: 'apps/v1', kind: 'Deployment', namespace, name, uid: `u-${name}` },
    });
    // Another namespace's object: never read.
    expect(await uids.show('a', event('web', 'victims'))).toBe(false);
    expect(reads).toEqual([]);
    // A list of 100 Events naming made-up objects: one answer costs at most 32 reads…
    const list = { kind: 'EventList', items: Array.from({ length: 100 }, (_, i) => event(`made-up-${i}`)) };
    await uids.show('a', list);
    expect(reads).toHaveLength(32);
    // …and what named nothing is not read again for a while.
    await uids.show('a', { kind: 'EventList', items: list.items.slice(0, 32) });
    expect(reads).toHaveLength(32);
  });
});
