import {
  QUOTA_CHANGED_AT_ANNOTATION,
  QUOTA_DRAWN_AT_ANNOTATION,
  QUOTA_SHARE_ANNOTATION,
  QUOTA_SHARE_LABEL,
} from '@cellfed/api';
import { quotaRefusalOf, type KubeObject, type ResourceQuota } from '@cellfed/federation';

import { FakeCell } from '../testing/fake-cell.ts';
import { quotaRefusal } from '../testing/quota-refusal.ts';
import { memoryLogger } from '../testing/memory-logger.ts';
import { ApiError } from '../kube/api-error.ts';
import { QuotaDraw, quotaRefusalIn, writeDrawingQuota } from './quota-draw.ts';

const PATH = '/api/v1/namespaces/shop/resourcequotas/team';
const REFUSAL = { quota: 'team', names: ['pods', 'requests.cpu'] };

function copy(cell: FakeCell, share: Record<string, string>, used: Record<string, string>) {
  cell.put(PATH, {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: {
      name: 'team',
      namespace: 'shop',
      labels: { [QUOTA_SHARE_LABEL]: 'true' },
      annotations: { [QUOTA_SHARE_ANNOTATION]: JSON.stringify(share) },
    },
    spec: { hard: share },
    status: { hard: share, used },
  } as KubeObject);
}

function setup(now = () => Date.parse('2026-11-27T12:00:00Z')) {
  const a = new FakeCell('a');
  const b = new FakeCell('b');
  const c = new FakeCell('c');
  const draw = new QuotaDraw({
    cells: () => [a, b, c].map((client) => ({ id: client.id, client })),
    logger: memoryLogger().logger,
    now,
  });
  const read = (cell: FakeCell) => cell.get(PATH) as ResourceQuota;
  return { a, b, c, draw, read };
}

describe('QuotaDraw', () => {
  it('moves the other cells’ unused share into the cell, lowering them first, every limit in force at once', async () => {
    const { a, b, c, draw, read } = setup();
    copy(a, { pods: '1', 'requests.cpu': '500m' }, { pods: '1', 'requests.cpu': '400m' });
    copy(b, { pods: '1', 'requests.cpu': '500m' }, { pods: '0', 'requests.cpu': '0' });
    copy(c, { pods: '1', 'requests.cpu': '0' }, { pods: '1', 'requests.cpu': '0' });
    const order: string[] = [];
    for (const cell of [a, b, c])
      cell.before = (method, path) =>
        order.push(`${cell.id} ${method} ${path.endsWith('/status') ? 'status' : 'spec'}`);

    expect(await draw.drawTo('a', 'shop', REFUSAL)).toBe(true);
    expect(read(a).spec?.hard).toEqual({ pods: '2', 'requests.cpu': '1' });
    expect(read(a).status?.hard).toEqual({ pods: '2', 'requests.cpu': '1' });
    expect(JSON.parse(read(a).metadata.annotations![QUOTA_SHARE_ANNOTATION]!)).toEqual({
      pods: '2',
      'requests.cpu': '1',
    });
    expect(read(b).spec?.hard).toEqual({ pods: '0', 'requests.cpu': '0' });
    expect(read(b).status?.hard).toEqual({ pods: '0', 'requests.cpu': '0' });
    expect(read(b).metadata.annotations?.[QUOTA_DRAWN_AT_ANNOTATION]).toBe('2026-11-27T12:00:00.000Z');
    // c had nothing free and is not written.
    expect(c.writes).toEqual([]);
    // Taken (and in force) before given.
    expect(order).toEqual(['b PUT spec', 'b PUT status', 'a PUT spec', 'a PUT status']);
  });

  it('says a write is worth sending again when nothing is free but a share changed a moment ago', async () => {
    let now = Date.parse('2026-11-27T12:00:00Z');
    const { a, b, draw } = setup(() => now);
    copy(a, { pods: '1' }, { pods: '1' });
    copy(b, { pods: '0' }, { pods: '0' });
    const lowered = b.get(PATH)!;
    b.put(PATH, {
      ...lowered,
      metadata: {
        ...lowered.metadata,
        annotations: {
          ...lowered.metadata.annotations,
          [QUOTA_CHANGED_AT_ANNOTATION]: new Date(now - 200).toISOString(),
        },
      },
    });
    expect(await draw.drawTo('a', 'shop', REFUSAL)).toBe(true);
    now += 5_000;
    expect(await draw.drawTo('a', 'shop', REFUSAL)).toBe(false);
  });

  it('lets writes refused while a draw into the same cell runs wait for it instead of drawing against it', async () => {
    const { a, b, draw, read } = setup();
    copy(a, { pods: '1' }, { pods: '1' });
    copy(b, { pods: '4' }, { pods: '0' });
    const results = await Promise.all([1, 2, 3].map(() => draw.drawTo('a', 'shop', REFUSAL)));
    expect(results).toEqual([true, true, true]);
    // One draw: b was lowered once, a raised once.
    expect(b.writes.filter((write) => !write.path.endsWith('/status'))).toHaveLength(1);
    expect(read(a).spec?.hard).toEqual({ pods: '5' });
  });

  it('gives nothing when nothing is free', async () => {
    const { a, b, c, draw } = setup();
    copy(a, { pods: '1' }, { pods: '1' });
    copy(b, { pods: '1' }, { pods: '1' });
    expect(await draw.drawTo('a', 'shop', REFUSAL)).toBe(false);
    expect([a, b, c].map((cell) => cell.writes.length)).toEqual([0, 0, 0]);
  });

  it('takes nothing from a copy that changed meanwhile, gives nothing, and says the write is worth sending again', async () => {
    const { a, b, draw, read } = setup();
    copy(a, { pods: '1' }, { pods: '1' });
    copy(b, { pods: '1' }, { pods: '0' });
    // b's own quota admission admits a pod between the list and the take: its version moved on.
    b.before = () => {
      b.before = undefined;
      copy(b, { pods: '1' }, { pods: '1' });
    };
    expect(await draw.drawTo('a', 'shop', REFUSAL)).toBe(true);
    expect(read(a).spec?.hard).toEqual({ pods: '1' });
    expect(read(b).spec?.hard).toEqual({ pods: '1' });
  });

  it('leaves a slow draw’s takings to the controller rather than give them late', async () => {
    let now = 0;
    const { a, b, draw, read } = setup(() => now);
    copy(a, { pods: '1' }, { pods: '1' });
    copy(b, { pods: '1' }, { pods: '0' });
    b.before = () => (now += 6_000);
    expect(await draw.drawTo('a', 'shop', REFUSAL)).toBe(false);
    expect(read(b).spec?.hard).toEqual({ pods: '0' });
    expect(read(a).spec?.hard).toEqual({ pods: '1' });
  });

  it('draws nothing for a cell that holds no copy or is not live', async () => {
    const { a, b, draw } = setup();
    copy(b, { pods: '1' }, { pods: '0' });
    expect(await draw.drawTo('a', 'shop', REFUSAL)).toBe(false);
    expect(await draw.drawTo('z', 'shop', REFUSAL)).toBe(false);
    expect([a, b].map((cell) => cell.writes.length)).toEqual([0, 0]);
  });
});

describe('writeDrawingQuota', () => {
  const exceeded = quotaRefusal();
  const forbidden = new ApiError(403, { code: 403, reason: 'Forbidden', message: 'cannot create' }, 'POST');

  it('tells a quota refusal from any other, and reads the quota and the names it names', () => {
    expect(quotaRefusalIn(exceeded)).toEqual({ quota: 'team', names: ['count/deployments.apps'] });
    expect(quotaRefusalIn(forbidden)).toBeUndefined();
    expect(quotaRefusalIn(new Error('exceeded quota: team'))).toBeUndefined();
    expect(
      quotaRefusalOf(
        'pods "big" is forbidden: exceeded quota: team, requested: pods=1,requests.cpu=800m, used: pods=0,requests.cpu=0, limited: pods=2,requests.cpu=500m',
      ),
    ).toEqual({ quota: 'team', names: ['pods', 'requests.cpu'] });
    // A name in an authorization refusal is not a quota refusal, whatever it says.
    expect(
      quotaRefusalOf(
        'configmaps "exceeded quota: team, requested: pods=1, used: " is forbidden: User "eve" cannot update resource "configmaps"',
      ),
    ).toBeUndefined();
  });

  it('writes once more after a draw gave the cell share, and throws the refusal otherwise', async () => {
    let calls = 0;
    const write = () => (++calls === 1 ? Promise.reject(exceeded) : Promise.resolve('written'));
    const drawn: string[] = [];
    const quota = {
      drawTo: (cell: string, namespace: string) => (
        drawn.push(`${cell}/${namespace}`),
        Promise.resolve(true)
      ),
    };
    await expect(writeDrawingQuota(quota, 'a', 'shop', write)).resolves.toBe('written');
    expect(drawn).toEqual(['a/shop']);
    await expect(
      writeDrawingQuota({ drawTo: () => Promise.resolve(false) }, 'a', 'shop', () =>
        Promise.reject(exceeded),
      ),
    ).rejects.toBe(exceeded);
    await expect(writeDrawingQuota(quota, 'a', 'shop', () => Promise.reject(forbidden))).rejects.toBe(
      forbidden,
    );
    expect(drawn).toEqual(['a/shop']);
  });
});
