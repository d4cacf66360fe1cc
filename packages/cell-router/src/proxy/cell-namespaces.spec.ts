import { MIRRORED_FROM_CONTROL_PLANE, MIRRORED_LABEL, NAMESPACE_UID_ANNOTATION } from '@cellfed/api';
import type { EngagedCell, KubeClient } from '@cellfed/controller-kit';
import { FakeCell, FakeListWatch, memoryLogger } from '@cellfed/controller-kit/testing';
import type { ObjectMeta } from '@cellfed/federation';
import { Registry } from 'prom-client';

import { CellNamespaces } from './cell-namespaces.ts';
import type { Refusal } from '../routing/destination.ts';
import { failure } from '../status/kube-status.ts';

const refusal: Refusal = {
  kind: 'refuse',
  status: failure(403, 'Forbidden', 'no'),
  cell: 'cell-1',
  route: 'forbidden',
};

async function settled(): Promise<void> {
  for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
}

function setUp(options: { cached?: ObjectMeta; inControlPlane?: ObjectMeta; inCell?: string[] }) {
  const cell = new FakeCell('cell-1');
  const cellNamespaces = new FakeListWatch();
  for (const name of options.inCell ?? []) cellNamespaces.put('', name);
  const reads: string[] = [];
  const namespaces = new CellNamespaces({
    registry: new Registry(),
    logger: memoryLogger().logger,
    controlPlaneNamespace: () => options.cached,
    readControlPlaneNamespace: async (name) => {
      reads.push(name);
      return options.inControlPlane;
    },
    cellListWatch: () => cellNamespaces,
  });
  const stop = new AbortController();
  namespaces.engage({
    id: 'cell-1',
    client: cell as unknown as KubeClient,
    signal: stop.signal,
  } as EngagedCell);
  const authorized: string[] = [];
  const allow = async () => {
    authorized.push('asked');
    return undefined;
  };
  return { cell, namespaces, reads, authorized, allow, stop };
}

describe('CellNamespaces', () => {
  it('makes a namespace the control plane made a moment ago (not yet in its cache) in the cell, once the caller may write', async () => {
    const { cell, namespaces, reads, authorized, allow, stop } = setUp({
      inControlPlane: { name: 'brief', uid: 'uid-1', labels: { team: 'a' } },
    });
    await settled();
    expect(await namespaces.ensure('cell-1', 'brief', allow)).toBeUndefined();
    expect(authorized).toEqual(['asked']);
    expect(reads).toEqual(['brief']);
    const made = cell.get('/api/v1/namespaces/brief')?.metadata;
    expect(made?.labels).toEqual({ team: 'a', [MIRRORED_LABEL]: MIRRORED_FROM_CONTROL_PLANE });
    expect(made?.annotations).toEqual({ [NAMESPACE_UID_ANNOTATION]: 'uid-1' });
    stop.abort();
  });

  it('reads and creates nothing for a caller the authorizer refuses, and hands back its refusal', async () => {
    const { cell, namespaces, reads, stop } = setUp({ inControlPlane: { name: 'brief' } });
    await settled();
    expect(await namespaces.ensure('cell-1', 'brief', async () => refusal)).toBe(refusal);
    expect(reads).toEqual([]);
    expect(cell.writes).toEqual([]);
    stop.abort();
  });

  it('creates nothing for a namespace the control plane does not have (the cell answers 404)', async () => {
    const { cell, namespaces, reads, allow, stop } = setUp({});
    await settled();
    expect(await namespaces.ensure('cell-1', 'nowhere', allow)).toBeUndefined();
    expect(reads).toEqual(['nowhere']);
    expect(cell.writes).toEqual([]);
    stop.abort();
  });

  it('does not make a namespace the control plane is deleting', async () => {
    const { cell, namespaces, allow, stop } = setUp({
      cached: { name: 'leaving', deletionTimestamp: '2026-12-06T12:00:00Z' },
    });
    await settled();
    await namespaces.ensure('cell-1', 'leaving', allow);
    expect(cell.writes).toEqual([]);
    stop.abort();
  });

  it('takes the cached namespace without reading the control plane', async () => {
    const { cell, namespaces, reads, allow, stop } = setUp({ cached: { name: 'kept' } });
    await settled();
    await namespaces.ensure('cell-1', 'kept', allow);
    expect(reads).toEqual([]);
    expect(cell.get('/api/v1/namespaces/kept')).toBeDefined();
    stop.abort();
  });

  it('asks nothing when the cell has the namespace already', async () => {
    const { cell, namespaces, reads, authorized, allow, stop } = setUp({
      cached: { name: 'there' },
      inCell: ['there'],
    });
    await settled();
    await namespaces.ensure('cell-1', 'there', allow);
    expect([authorized, reads, cell.writes]).toEqual([[], [], []]);
    stop.abort();
  });

  it('shares one read and one create among a burst of writes into the same new namespace', async () => {
    const { cell, namespaces, reads, allow, stop } = setUp({ inControlPlane: { name: 'burst' } });
    await settled();
    await Promise.all([1, 2, 3].map(() => namespaces.ensure('cell-1', 'burst', allow)));
    expect(reads).toEqual(['burst']);
    expect(cell.writes).toEqual([{ method: 'POST', path: '/api/v1/namespaces' }]);
    stop.abort();
  });
});
