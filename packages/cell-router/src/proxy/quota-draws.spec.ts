import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';

import { jest } from '@jest/globals';
import type { Dispatcher } from 'undici';

import type { Refusal } from '../routing/destination.ts';
import { sendDrawingQuota, type DrawingWrite } from './quota-draws.ts';

function answer(statusCode: number, body: unknown): Dispatcher.ResponseData {
  const bytes = Buffer.from(JSON.stringify(body));
  return {
    statusCode,
    headers: { 'content-type': 'application/json' },
    body: Object.assign(Readable.from([bytes]), {
      arrayBuffer: () =>
        Promise.resolve(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)),
      text: () => Promise.resolve(bytes.toString()),
    }),
  } as unknown as Dispatcher.ResponseData;
}

const exceeded = {
  kind: 'Status',
  status: 'Failure',
  reason: 'Forbidden',
  code: 403,
  message:
    'pods "big" is forbidden: exceeded quota: team, requested: requests.cpu=800m, used: requests.cpu=0, limited: requests.cpu=500m',
};
const denied = {
  kind: 'Status',
  status: 'Failure',
  reason: 'Forbidden',
  code: 403,
  message: 'pods is forbidden: User "x" cannot create',
};

const allowed = () => Promise.resolve(undefined);
const write = (overrides: Partial<DrawingWrite> = {}): DrawingWrite => ({
  cell: 'cell-1',
  namespace: 'shop',
  authorize: allowed,
  url: '/api/v1/namespaces/shop/pods',
  ...overrides,
});
const drawer = (result = true) =>
  jest.fn((_cell: string, _namespace: string, _refusal: unknown) => Promise.resolve(result));

describe('sendDrawingQuota', () => {
  it('draws the refusing quota’s names into the cell and sends the write again', async () => {
    const answers = [answer(403, exceeded), answer(201, { kind: 'Pod' })];
    const send = jest.fn(() => Promise.resolve(answers.shift()!));
    const drawTo = drawer();
    const upstream = await sendDrawingQuota(send, { drawTo }, write());
    expect(upstream.statusCode).toBe(201);
    expect(drawTo).toHaveBeenCalledWith('cell-1', 'shop', { quota: 'team', names: ['requests.cpu'] });
    expect(send).toHaveBeenCalledTimes(2);
  });

  it('draws again when a draw lost a race, at most twice', async () => {
    const answers = [answer(403, exceeded), answer(403, exceeded), answer(201, { kind: 'Pod' })];
    const send = jest.fn(() => Promise.resolve(answers.shift()!));
    const drawTo = drawer();
    expect((await sendDrawingQuota(send, { drawTo }, write())).statusCode).toBe(201);
    expect(drawTo).toHaveBeenCalledTimes(2);
    const refusing = jest.fn(() => Promise.resolve(answer(403, exceeded)));
    expect((await sendDrawingQuota(refusing, { drawTo }, write())).statusCode).toBe(403);
    expect(refusing).toHaveBeenCalledTimes(3);
  });

  it('relays the refusal as it came when nothing could be drawn, the draw failed, or it was no quota refusal', async () => {
    for (const [body, drawTo] of [
      [exceeded, () => Promise.resolve(false)],
      [exceeded, () => Promise.reject(new Error('cell-2 unreachable'))],
      [denied, () => Promise.resolve(true)],
    ] as const) {
      const send = jest.fn(() => Promise.resolve(answer(403, body)));
      const draw = jest.fn(drawTo);
      const upstream = await sendDrawingQuota(send, { drawTo: draw }, write());
      expect(upstream.statusCode).toBe(403);
      expect(JSON.parse(await text(upstream.body))).toEqual(body);
      expect(send).toHaveBeenCalledTimes(1);
      expect(draw).toHaveBeenCalledTimes(body === denied ? 0 : 1);
    }
  });

  it('draws nothing for a caller the control plane does not allow the write, nor for a dry run', async () => {
    const refused: Refusal = { kind: 'refuse' } as unknown as Refusal;
    for (const overrides of [
      { authorize: () => Promise.resolve(refused) },
      { url: '/api/v1/namespaces/shop/pods?dryRun=All' },
    ]) {
      const send = jest.fn(() => Promise.resolve(answer(403, exceeded)));
      const drawTo = drawer();
      expect((await sendDrawingQuota(send, { drawTo }, write(overrides))).statusCode).toBe(403);
      expect(drawTo).not.toHaveBeenCalled();
    }
  });

  it('leaves other answers unread, and draws nothing without a namespace or a drawer', async () => {
    const drawTo = drawer();
    const created = answer(201, { kind: 'Pod' });
    expect(await sendDrawingQuota(() => Promise.resolve(created), { drawTo }, write())).toBe(created);
    const refused = answer(403, exceeded);
    expect(await sendDrawingQuota(() => Promise.resolve(refused), undefined, write())).toBe(refused);
    const clusterScoped = answer(403, exceeded);
    expect(
      await sendDrawingQuota(() => Promise.resolve(clusterScoped), { drawTo }, write({ namespace: '' })),
    ).toBe(clusterScoped);
    expect(drawTo).not.toHaveBeenCalled();
  });
});
