import {
  ApiError,
  errorMessage,
  isGone,
  realClock,
  sleep,
  type Clock,
  type ListWatch,
} from '@cellfed/controller-kit';
import type { Logger } from 'pino';

import type { ResourceHistory } from './resource-history.ts';

interface WatchedMeta {
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
  };
}

/** How long one watch of the feed runs before it is opened again from where it was (no gap). */
const WATCH_SECONDS = 300;

/**
 * Follows one source's changes of one resource into a history, as the router itself: the source's version
 * (a metadata list of one item: nothing is kept per object, so a source of millions costs what one of ten
 * does), then a metadata watch from it with bookmarks, opened again from its last version whenever it ends
 * or its connection breaks. A watch whose version expired (410) leaves a gap: the history stops answering for
 * the source and it begins anew from a fresh version, after a backoff.
 *
 * Only names, namespaces, labels and versions are read, to order changes: nothing read here is ever served.
 * A source that refuses the router (403) is not followed: its changes are not ordered.
 */
export async function feedHistory(options: {
  history: ResourceHistory;
  source: string;
  /** The source's metadata of the resource (controller-kit's resourceListWatch, metadataOnly). */
  listWatch: ListWatch;
  signal: AbortSignal;
  logger: Logger;
  clock?: Clock;
  /** Called once the source has begun, or failed its first attempt. */
  onFirstAttempt?: (ok: boolean) => void;
}): Promise<void> {
  const { history, source, signal, logger } = options;
  const clock = options.clock ?? realClock;
  const { listWatch } = options;
  let first = options.onFirstAttempt;
  let delayMs = 500;
  while (!signal.aborted) {
    let version: string;
    try {
      version = await currentVersion(listWatch, signal);
      history.begin(source, Number(version));
      first?.(true);
      first = undefined;
    } catch (error) {
      if (signal.aborted) return;
      first?.(false);
      first = undefined;
      // The router may not read this resource here (the chart grants what the router orders): its watches
      // are merged in arrival order, as before there was a history.
      if (error instanceof ApiError && error.statusCode === 403) {
        logger.info(
          { cell: source, err: errorMessage(error) },
          'history not kept: the router may not watch here',
        );
        return;
      }
      logger.warn({ cell: source, err: errorMessage(error), retryInMs: delayMs }, 'history list failed');
      await sleep(clock, delayMs, signal);
      delayMs = Math.min(delayMs * 2, 30_000);
      continue;
    }
    // Watches from the last version, for as long as each ends cleanly.
    let broken: string | undefined;
    while (!signal.aborted && broken === undefined) {
      try {
        const events = await listWatch.watch({
          resourceVersion: version,
          timeoutSeconds: WATCH_SECONDS,
          signal,
        });
        for await (const event of events) {
          const meta = (event.object as WatchedMeta).metadata ?? {};
          if (event.type === 'ERROR') {
            broken = `watch ended with ${JSON.stringify(event.object).slice(0, 200)}`;
            break;
          }
          const own = meta.resourceVersion;
          if (!own || !/^[0-9]+$/.test(own)) continue;
          version = own;
          if (event.type === 'BOOKMARK') history.progress(source, Number(own));
          else
            history.record(source, {
              type: event.type,
              version: Number(own),
              namespace: meta.namespace ?? '',
              name: meta.name ?? '',
              ...(meta.labels ? { labels: meta.labels } : {}),
            });
          delayMs = 500;
        }
      } catch (error) {
        if (signal.aborted) break;
        // Only an expired version leaves a gap; a connection that broke resumes where it was (the history
        // still follows the source: its next changes are recorded when they come).
        if (isGone(error)) broken = errorMessage(error);
        else {
          logger.warn(
            { cell: source, err: errorMessage(error), retryInMs: delayMs },
            'history watch failed; resuming',
          );
          await sleep(clock, delayMs, signal);
          delayMs = Math.min(delayMs * 2, 30_000);
        }
      }
    }
    history.stop(source);
    if (signal.aborted) return;
    logger.warn({ cell: source, why: broken, retryInMs: delayMs }, 'history watch broke; listing again');
    await sleep(clock, delayMs, signal);
    delayMs = Math.min(delayMs * 2, 30_000);
  }
}

/** The source's current version of the resource: a list's, of one item (its items are not read). */
async function currentVersion(listWatch: ListWatch, signal: AbortSignal): Promise<string> {
  const { resourceVersion: version } = await listWatch.list({ limit: 1, signal });
  if (!/^[0-9]+$/.test(version)) throw new Error(`list resourceVersion "${version}" is not a number`);
  return version;
}
