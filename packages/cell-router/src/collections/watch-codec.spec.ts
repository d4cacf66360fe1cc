import { HELD_OWNERS_ANNOTATION, ORIGIN_UID_ANNOTATION } from '@cellfed/api';
import { REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import { formatHeldOwners } from '@cellfed/federation';

import { JSON_WATCH } from './watch-codec.ts';
import type { WatchedObject } from './watched-object.ts';

const owner = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'cell-uid', controller: true };
const held = { apiVersion: 'v1', kind: 'ServiceAccount', name: 'builder', uid: 'sa-1' };

describe('JSON_WATCH.shown', () => {
  it('shows the client view at the composite version and leaves the event as the cell sent it', () => {
    const event: WatchedObject = {
      kind: 'ReplicaSet',
      metadata: {
        name: 'web-1',
        namespace: 'shop',
        resourceVersion: '42',
        labels: { app: 'web', [REBALANCE_STATUS_LABEL]: 'migrating' },
        ownerReferences: [owner],
        annotations: {
          [ORIGIN_UID_ANNOTATION]: 'first-uid',
          [HELD_OWNERS_ANNOTATION]: formatHeldOwners([held]),
        },
        uid: 'copy-uid',
      } as WatchedObject['metadata'],
    };
    const sent = structuredClone(event);

    const shown = JSON_WATCH.shown(event, 'cf1.composite', {});
    const metadata = shown.metadata as unknown as {
      annotations?: unknown;
      ownerReferences: { uid: string }[];
    };
    // What owner uids do to a shown object: its references' uids are edited in place.
    metadata.ownerReferences[0]!.uid = 'client-uid';

    expect(metadata).toMatchObject({
      resourceVersion: 'cf1.composite',
      uid: 'first-uid',
      labels: { app: 'web' },
    });
    expect(metadata.annotations).toBeUndefined();
    expect(metadata.ownerReferences.map((ref) => ref.uid)).toEqual(['client-uid', 'sa-1']);
    expect(event).toEqual(sent);
  });

  it('leaves a Table event as the cell sent it too', () => {
    const event = {
      kind: 'Table',
      metadata: { resourceVersion: '7' },
      rows: [
        {
          cells: ['web'],
          object: {
            metadata: { name: 'web', resourceVersion: '7', labels: { [REBALANCE_STATUS_LABEL]: 'migrated' } },
          },
        },
      ],
    };
    const sent = structuredClone(event);

    const shown = JSON_WATCH.shown(event as WatchedObject, 'cf1.composite', {});

    expect(shown.rows?.[0]?.object?.metadata).toEqual({ name: 'web', resourceVersion: 'cf1.composite' });
    expect(event).toEqual(sent);
  });
});
