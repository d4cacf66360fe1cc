import { PROMOTION_REQUESTED_ANNOTATION } from '@cellfed/api';
import { isNotFound, realClock, type Clock, type KubeClient } from '@cellfed/controller-kit';
import { MERGE_PATCH, cellBackupPath } from '@cellfed/federation';
import type { Logger } from 'pino';

/** Asked once per backup per this long at most: clients retry a 429 every second, many of them at once. */
const DEFAULT_MIN_INTERVAL_MS = 5000;

/**
 * Puts a Down cell's key that a client waits on at the front of the backup controller's promotions: the
 * router marks the key's CellBackup (PROMOTION_REQUESTED_ANNOTATION), as itself, and the controller, which
 * watches every CellBackup, promotes that key next. Called only for a write a caller is allowed and that was
 * refused because the key is not promoted yet; nothing waits for it (the caller already has its 429).
 */
export class PromotionRequests {
  /** When each backup (`cell/name`) was last asked for, oldest first. */
  private readonly asked = new Map<string, number>();
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly minIntervalMs: number;

  constructor(options: { logger: Logger; clock?: Clock; minIntervalMs?: number }) {
    this.logger = options.logger;
    this.clock = options.clock ?? realClock;
    this.minIntervalMs = options.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS;
  }

  /** Asks for the promotion of the backup `name` in `cell` (the cell that took the key over). */
  request(client: Pick<KubeClient, 'request'>, cell: string, name: string): void {
    const now = this.clock.now();
    this.forgetOlderThan(now - this.minIntervalMs);
    const id = `${cell}/${name}`;
    if (this.asked.has(id)) return;
    this.asked.set(id, now);
    const annotations = { [PROMOTION_REQUESTED_ANNOTATION]: new Date(now).toISOString() };
    client
      .request('PATCH', cellBackupPath(name), {
        body: { metadata: { annotations } },
        contentType: MERGE_PATCH,
      })
      .then(
        () => this.logger.debug({ cell, backup: name }, 'promotion requested'),
        (error: unknown) => {
          // Promoted (and its backup removed) meanwhile: what was asked for is done.
          if (isNotFound(error)) return;
          this.asked.delete(id);
          this.logger.warn({ cell, backup: name, err: error }, 'could not request a promotion');
        },
      );
  }

  private forgetOlderThan(cutoff: number): void {
    for (const [id, at] of this.asked) {
      if (at > cutoff) return;
      this.asked.delete(id);
    }
  }
}
