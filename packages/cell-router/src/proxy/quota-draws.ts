import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

import { QUOTA_DRAW_ATTEMPTS, QUOTA_DRAW_SETTLE_MS } from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';

import type { Authorize } from '../auth/request-authorization.ts';
import { isDryRun } from '../request/query-param.ts';
import { quotaRefusalOf, type QuotaRefusal } from '@cellfed/federation';

/** Moves unused quota share into a cell (controller-kit's QuotaDraw). */
export interface QuotaDrawing {
  drawTo(cell: string, namespace: string, refusal: QuotaRefusal): Promise<boolean>;
}

/** The write a quota draw may follow, as the router knows it. */
export interface DrawingWrite {
  readonly cell: string;
  readonly namespace: string;
  /** Asks the control plane whether the caller may make this write (a SubjectAccessReview). */
  readonly authorize: Authorize;
  /** The caller's request path and query: a dry run draws nothing. */
  readonly url: string;
  readonly log?: Logger | undefined;
}

/**
 * Sends a write to a cell; if the cell's own quota admission refuses it, draws the unused share of the
 * quota that refused, for the names the write asked for, from the other cells into this one, and sends it
 * once more. The draw is the router's own bookkeeping, never the caller's request, so it follows only a
 * write the caller is allowed (asked of the control plane first: a refusal that merely reads like a quota's
 * is not trusted) and not a dry run. A draw that lost a race may leave the write refused once more: it
 * draws again, up to QUOTA_DRAW_ATTEMPTS times. A write that still does not fit, or one the federation's
 * limits do not allow, gets the cell's refusal as it came. Only a write whose body the router holds (`send`
 * sends it again) can be retried.
 */
export async function sendDrawingQuota(
  send: () => Promise<Dispatcher.ResponseData>,
  quota: QuotaDrawing | undefined,
  write: DrawingWrite,
): Promise<Dispatcher.ResponseData> {
  const { cell, namespace, log } = write;
  const drawing = quota && namespace && !isDryRun(write.url);
  for (let draws = 0; ; draws++) {
    const upstream = await send();
    if (!drawing || upstream.statusCode !== 403) return upstream;
    const bytes = Buffer.from(await upstream.body.arrayBuffer());
    const refusal = quotaRefusalOf(bytes.toString('latin1'));
    if (!refusal || draws >= QUOTA_DRAW_ATTEMPTS) return replay(upstream, bytes);
    if (draws === 0 && (await write.authorize())) return replay(upstream, bytes);
    const drawn = await quota.drawTo(cell, namespace, refusal).catch((error: unknown) => {
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
