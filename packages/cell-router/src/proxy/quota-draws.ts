import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

import { QUOTA_DRAW_ATTEMPTS, QUOTA_DRAW_SETTLE_MS, QUOTA_EXCEEDED } from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';

/** Moves unused quota share into a cell (controller-kit's QuotaDraw). */
export interface QuotaDrawing {
  drawTo(cell: string, namespace: string): Promise<boolean>;
}

/**
 * Sends a write to a cell; if the cell's own quota admission refuses it, draws the unused share of the
 * namespace's quotas from the other cells into this one and sends it once more. The refusal was the cell's:
 * the caller was authenticated, authorized and admitted up to the quota (kube-apiserver checks quota last),
 * so the draw — the router's own bookkeeping, never the caller's request — follows a write the caller may
 * make. A draw that lost a race may leave the write refused once more: it draws again, up to
 * QUOTA_DRAW_ATTEMPTS times. A write that still does not fit, or one the federation's limits do not allow,
 * gets the cell's refusal as it came. Only a write whose body the router holds (`send` sends it again) can
 * be retried.
 */
export async function sendDrawingQuota(
  send: () => Promise<Dispatcher.ResponseData>,
  quota: QuotaDrawing | undefined,
  cell: string,
  namespace: string,
  log?: Logger,
): Promise<Dispatcher.ResponseData> {
  for (let draws = 0; ; draws++) {
    const upstream = await send();
    if (!quota || !namespace || upstream.statusCode !== 403) return upstream;
    const bytes = Buffer.from(await upstream.body.arrayBuffer());
    if (!bytes.toString('latin1').includes(QUOTA_EXCEEDED) || draws >= QUOTA_DRAW_ATTEMPTS)
      return replay(upstream, bytes);
    const drawn = await quota.drawTo(cell, namespace).catch((error: unknown) => {
      log?.warn(
        { cell, namespace, err: error instanceof Error ? error.message : String(error) },
        'quota draw failed',
      );
      return false;
    });
    if (!drawn) return replay(upstream, bytes);
    await sleep(QUOTA_DRAW_SETTLE_MS[draws] ?? 100);
  }
}

/** The answer again, its body already read: relayed as if it had just arrived. */
function replay(upstream: Dispatcher.ResponseData, bytes: Buffer): Dispatcher.ResponseData {
  const body = Object.assign(Readable.from([bytes]), {
    text: () => Promise.resolve(bytes.toString('utf8')),
    arrayBuffer: () => Promise.resolve(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)),
    json: () => Promise.resolve(JSON.parse(bytes.toString('utf8')) as unknown),
  });
  return { ...upstream, body: body as unknown as Dispatcher.ResponseData['body'] };
}
