import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { jest } from '@jest/globals';

import type { Dispatcher } from 'undici';

import { sendDrawingQuota } from './quota-draws.ts';

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

describe('sendDrawingQuota', () => {
  it('draws share into the cell and sends the write again when the cell’s quota admission refused it', async () => {
    const answers = [answer(403, exceeded), answer(201, { kind: 'Pod' })];
    const send = jest.fn(() => Promise.resolve(answers.shift()!));
    const drawTo = jest.fn(() => Promise.resolve(true));
    const upstream = await sendDrawingQuota(send, { drawTo }, 'cell-1', 'shop');
    expect(upstream.statusCode).toBe(201);
    expect(drawTo).toHaveBeenCalledWith('cell-1', 'shop');
    expect(send).toHaveBeenCalledTimes(2);
  });

  it('draws again when a draw lost a race, at most twice', async () => {
    const answers = [answer(403, exceeded), answer(403, exceeded), answer(201, { kind: 'Pod' })];
    const send = jest.fn(() => Promise.resolve(answers.shift()!));
    const drawTo = jest.fn((_cell: string, _namespace: string) => Promise.resolve(true));
    expect((await sendDrawingQuota(send, { drawTo }, 'cell-1', 'shop')).statusCode).toBe(201);
    expect(drawTo).toHaveBeenCalledTimes(2);
    const refusing = jest.fn(() => Promise.resolve(answer(403, exceeded)));
    expect((await sendDrawingQuota(refusing, { drawTo }, 'cell-1', 'shop')).statusCode).toBe(403);
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
      const upstream = await sendDrawingQuota(send, { drawTo: draw }, 'cell-1', 'shop');
      expect(upstream.statusCode).toBe(403);
      expect(JSON.parse(await text(upstream.body))).toEqual(body);
      expect(send).toHaveBeenCalledTimes(1);
      expect(draw).toHaveBeenCalledTimes(body === denied ? 0 : 1);
    }
  });

  it('leaves other answers unread, and draws nothing without a namespace or a drawer', async () => {
    const drawTo = jest.fn((_cell: string, _namespace: string) => Promise.resolve(true));
    const created = answer(201, { kind: 'Pod' });
    expect(await sendDrawingQuota(() => Promise.resolve(created), { drawTo }, 'cell-1', 'shop')).toBe(
      created,
    );
    const refused = answer(403, exceeded);
    expect(await sendDrawingQuota(() => Promise.resolve(refused), undefined, 'cell-1', 'shop')).toBe(refused);
    const clusterScoped = answer(403, exceeded);
    expect(await sendDrawingQuota(() => Promise.resolve(clusterScoped), { drawTo }, 'cell-1', '')).toBe(
      clusterScoped,
    );
    expect(drawTo).not.toHaveBeenCalled();
  });
});
