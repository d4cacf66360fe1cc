import type { WatchEvent } from '@cellfed/controller-kit';

import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { CellMadeTracker } from './cell-made-tracker.ts';

const event = (
  type: WatchEvent['type'],
  name: string,
  namespace = 'shop',
  creationTimestamp = '2026-11-27T10:00:00Z',
): WatchEvent => ({
  type,
  object: { kind: 'ReplicaSet', metadata: { namespace, name, resourceVersion: '1', creationTimestamp } },
});
const LATER = '2026-11-27T11:00:00Z';

describe('CellMadeTracker', () => {
  const replicaSets = { group: 'apps', resource: 'replicasets' };

  it('shows every event of an object held by one source, from whichever source holds it', async () => {
    const tracker = new CellMadeTracker(replicaSets);
    expect((await tracker.decide('a', event('ADDED', 'web-1')))?.type).toBe('ADDED');
    expect((await tracker.decide('a', event('MODIFIED', 'web-1')))?.type).toBe('MODIFIED');
    expect((await tracker.decide('c', event('ADDED', 'db-1')))?.type).toBe('ADDED');
    expect((await tracker.decide('a', event('DELETED', 'web-1')))?.type).toBe('DELETED');
    expect((await tracker.decide('a', event('ADDED', 'web-1')))?.type).toBe('ADDED');
  });

  it('shows the newest copy under one name, as a list does: its arrival as a change, the other’s events not', async () => {
    const tracker = new CellMadeTracker(replicaSets);
    await tracker.decide('a', event('ADDED', 'web-1'));
    // The moved Deployment's new cell makes (or is given) its own ReplicaSet under the same name.
    expect((await tracker.decide('c', event('ADDED', 'web-1', 'shop', LATER)))?.type).toBe('MODIFIED');
    // The old cell scales its own down, then collects it: the client has the new cell's, and keeps it.
    expect(await tracker.decide('a', event('MODIFIED', 'web-1'))).toBeUndefined();
    expect(await tracker.decide('a', event('DELETED', 'web-1'))).toBeUndefined();
    expect((await tracker.decide('c', event('MODIFIED', 'web-1', 'shop', LATER)))?.type).toBe('MODIFIED');
    expect((await tracker.decide('c', event('DELETED', 'web-1', 'shop', LATER)))?.type).toBe('DELETED');
  });

  it('hides an older copy arriving second, and keeps the first on a tie', async () => {
    const tracker = new CellMadeTracker(replicaSets);
    await tracker.decide('c', event('ADDED', 'web-1', 'shop', LATER));
    expect(await tracker.decide('a', event('ADDED', 'web-1'))).toBeUndefined();
    await tracker.decide('a', event('ADDED', 'db-1'));
    expect(await tracker.decide('c', event('ADDED', 'db-1'))).toBeUndefined();
  });

  it('shows the remaining copy, read from its source, when the copy the client has is deleted', async () => {
    const read: string[] = [];
    const tracker = new CellMadeTracker(replicaSets, async (source, namespace, name) => {
      read.push(`${source}:${namespace}/${name}`);
      return { kind: 'ReplicaSet', metadata: { namespace, name, resourceVersion: '9' } };
    });
    await tracker.decide('c', event('ADDED', 'web-1', 'shop', LATER));
    await tracker.decide('a', event('ADDED', 'web-1'));
    // The newest copy goes first (the move was undone, say): the client is shown the one that remains.
    expect(await tracker.decide('c', event('DELETED', 'web-1', 'shop', LATER))).toEqual({
      type: 'MODIFIED',
      object: { kind: 'ReplicaSet', metadata: { namespace: 'shop', name: 'web-1', resourceVersion: '9' } },
      source: 'a',
    });
    expect(read).toEqual(['a:shop/web-1']);
    expect((await tracker.decide('a', event('MODIFIED', 'web-1')))?.type).toBe('MODIFIED');
    expect((await tracker.decide('a', event('DELETED', 'web-1')))?.type).toBe('DELETED');
  });

  it('shows the control plane’s copy of what each apiserver makes for itself, never a cell’s', async () => {
    const tracker = new CellMadeTracker({ group: '', resource: 'pods' });
    expect(await tracker.decide('a', event('ADDED', 'etcd-0', 'kube-system'))).toBeUndefined();
    expect((await tracker.decide(CONTROL_PLANE_SOURCE, event('ADDED', 'etcd-0', 'kube-system')))?.type).toBe(
      'ADDED',
    );
  });
});
