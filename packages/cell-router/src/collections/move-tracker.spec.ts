import { parseCellSetSpec } from '@cellfed/api';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';

import { routingState } from '../routing/route-plan.ts';
import { MoveTracker } from './move-tracker.ts';

const spec = (b: 'Joining' | 'Normal') =>
  parseCellSetSpec({
    cells: [
      { id: 'a', state: 'Normal', kubeconfigSecretRef: { name: 'a' } },
      { id: 'b', state: b, kubeconfigSecretRef: { name: 'b' } },
    ],
  });

const configMap = (name: string, resourceVersion: string, labels: Record<string, string> = {}) => ({
  kind: 'ConfigMap',
  metadata: { namespace: 'ns', name, resourceVersion, labels },
});

describe('MoveTracker', () => {
  it('keeps what it knows of an object only while it moves: a new copy until its move is announced, nothing once the moves end', async () => {
    const joining = routingState(spec('Joining'), 1);
    const moving = Array.from({ length: 400 }, (_, i) => `m-${i}`).filter(
      (name) => joining.table.route(joining.table.keyOf({ namespace: 'ns', name })).newCell === 'b',
    );
    expect(moving.length).toBeGreaterThan(50);
    const tracker = new MoveTracker(
      {
        resource: { group: '', resource: 'configmaps' },
        namespaceLabels: () => undefined,
        readCopy: async () => undefined,
      },
      false,
    );
    const shown: string[] = [];
    for (const [i, name] of moving.entries()) {
      // The copy in the new cell, then the old one marked migrating and migrated: one MODIFIED shows the new.
      await tracker.decide('b', { type: 'ADDED', object: configMap(name, `${1000 + i}`) }, joining);
      await tracker.decide(
        'a',
        { type: 'MODIFIED', object: configMap(name, `${i * 3}`, { [REBALANCE_STATUS_LABEL]: MIGRATING }) },
        joining,
      );
      const announced = await tracker.decide(
        'a',
        { type: 'MODIFIED', object: configMap(name, `${i * 3 + 1}`, { [REBALANCE_STATUS_LABEL]: MIGRATED }) },
        joining,
      );
      if (announced)
        shown.push(
          `${announced.type} ${(announced.object as { metadata: { resourceVersion: string } }).metadata.resourceVersion}`,
        );
      // The new copy changing after the switch: shown, and not kept.
      const after = await tracker.decide(
        'b',
        { type: 'MODIFIED', object: configMap(name, `${2000 + i}`) },
        joining,
      );
      expect(after?.type).toBe('MODIFIED');
    }
    expect(shown).toEqual(moving.map((_, i) => `MODIFIED ${1000 + i}`));
    // While the join runs, a few flags per moved object; no object itself.
    expect(tracker.kept()).toEqual({ objects: moving.length, copies: 0 });

    // The join ended: a new routing state in which every object has one cell.
    const joined = routingState(spec('Normal'), 2);
    const settled = await tracker.decide(
      'b',
      { type: 'MODIFIED', object: configMap(moving[0]!, '3000') },
      joined,
    );
    expect(settled?.type).toBe('MODIFIED');
    expect(tracker.kept()).toEqual({ objects: 0, copies: 0 });
  });
});
