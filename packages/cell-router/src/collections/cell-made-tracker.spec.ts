import type { WatchEvent } from '@cellfed/controller-kit';

import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { CellMadeTracker } from './cell-made-tracker.ts';

const event = (type: WatchEvent['type'], name: string, namespace = 'shop'): WatchEvent => ({
  type,
  object: { kind: 'ReplicaSet', metadata: { namespace, name, resourceVersion: '1' } },
});

describe('CellMadeTracker', () => {
  const replicaSets = { group: 'apps', resource: 'replicasets' };

  it('shows every event of an object held by one source, from whichever source holds it', () => {
    const tracker = new CellMadeTracker(replicaSets);
    expect(tracker.decide('a', event('ADDED', 'web-1'))?.type).toBe('ADDED');
    expect(tracker.decide('a', event('MODIFIED', 'web-1'))?.type).toBe('MODIFIED');
    expect(tracker.decide('c', event('ADDED', 'db-1'))?.type).toBe('ADDED');
    expect(tracker.decide('a', event('DELETED', 'web-1'))?.type).toBe('DELETED');
    expect(tracker.decide('a', event('ADDED', 'web-1'))?.type).toBe('ADDED');
  });

  it('tells of a second copy under one name as a change, and not of the first copy’s deletion', () => {
    const tracker = new CellMadeTracker(replicaSets);
    tracker.decide('a', event('ADDED', 'web-1'));
    // The moved Deployment's new cell makes its own ReplicaSet under the same name.
    expect(tracker.decide('c', event('ADDED', 'web-1'))?.type).toBe('MODIFIED');
    // The old cell collects its own: the name still exists.
    expect(tracker.decide('a', event('DELETED', 'web-1'))).toBeUndefined();
    expect(tracker.decide('c', event('MODIFIED', 'web-1'))?.type).toBe('MODIFIED');
    expect(tracker.decide('c', event('DELETED', 'web-1'))?.type).toBe('DELETED');
  });

  it('shows the control plane’s copy of what each apiserver makes for itself, never a cell’s', () => {
    const tracker = new CellMadeTracker({ group: '', resource: 'pods' });
    expect(tracker.decide('a', event('ADDED', 'etcd-0', 'kube-system'))).toBeUndefined();
    expect(tracker.decide(CONTROL_PLANE_SOURCE, event('ADDED', 'etcd-0', 'kube-system'))?.type).toBe('ADDED');
  });
});
