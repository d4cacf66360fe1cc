import { setTimeout as sleep } from 'node:timers/promises';

import type { Logger } from 'pino';
import { RESOURCE_QUOTAS, resourcePath } from '@cellfed/federation';

import { errorMessage } from '../errors.ts';
import { ApiError, isConflict } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { parseResourceList } from '@cellfed/federation';
import { enforce, listQuotaCopies, putShare, writeShare } from './quota-copies.ts';
import {
  changedAtOf,
  drawFrom,
  quotaRefusalOf,
  shareOf,
  type Amounts,
  type QuotaRefusal,
  type ResourceQuota,
} from '@cellfed/federation';

type Client = Pick<KubeClient, 'request'>;

/** The quota refusal an apiserver answered a write with, if it was one. */
export function quotaRefusalIn(error: unknown): QuotaRefusal | undefined {
  return error instanceof ApiError && error.statusCode === 403
    ? quotaRefusalOf(error.status.message ?? '')
    : undefined;
}

/** How long after a copy's share changed a draw that found nothing is worth trying again. */
const QUOTA_SETTLING_MS = 1000;

/** Draws before a write refused for quota is given up: a draw can lose a race with another, once or twice. */
export const QUOTA_DRAW_ATTEMPTS = 2;

/**
 * How long a write waits after a draw before it is sent again: the cell's quota admission reads limits from
 * its own cache, which takes a moment to see the new one.
 */
export const QUOTA_DRAW_SETTLE_MS = [20, 100] as const;

/**
 * Runs a write into a cell; while the cell's own quota admission refuses it and a draw of the namespace's
 * unused share into the cell (QuotaDraw) may have changed that, runs it again, at most
 * {@link QUOTA_DRAW_ATTEMPTS} more times. What still does not fit throws the cell's refusal.
 */
export async function writeDrawingQuota<T>(
  quota: Pick<QuotaDraw, 'drawTo'> | undefined,
  cell: string,
  namespace: string,
  write: () => Promise<T>,
): Promise<T> {
  for (let draws = 0; ; draws++) {
    try {
      return await write();
    } catch (error) {
      const refusal = quotaRefusalIn(error);
      if (!quota || !namespace || !refusal || draws >= QUOTA_DRAW_ATTEMPTS) throw error;
      if (!(await quota.drawTo(cell, namespace, refusal))) throw error;
      await sleep(QUOTA_DRAW_SETTLE_MS[draws] ?? 100);
    }
  }
}

export interface DrawCell {
  readonly id: string;
  readonly client: Client;
}

export interface QuotaDrawOptions {
  /** The cells that hold shares now: every live, engaged cell. */
  cells: () => readonly DrawCell[];
  logger: Logger;
  /**
   * A draw whose takes took longer than this gives nothing: the controller that divides the quota holds a
   * shortfall back for its settle time (10 s) after a draw and then hands it out itself, and a late give
   * would hand it out twice. Default 5 s.
   */
  giveWithinMs?: number;
  now?: () => number;
}

/**
 * Moves the unused share of the quota that refused a write, for the names the write asked for, from the
 * other cells to the cell whose own quota admission refused it while the federation's limits still allow
 * it: the write is then tried again. Each
 * copy is lowered first (its `resourceVersion` the precondition, its new limits in force before the next
 * step), and the cell is given only what was taken, so the shares never add up to more than a limit even
 * while two draws race. Used by the router for clients' writes and by the rebalance controller for moves.
 */
export class QuotaDraw {
  private readonly options: QuotaDrawOptions;
  /**
   * The draw in progress into each cell for each quota: writes refused meanwhile wait for it and are sent
   * again, instead of drawing against it (many moves into one cell at once would otherwise race each
   * other's preconditions).
   */
  private readonly inFlight = new Map<string, Promise<boolean>>();

  constructor(options: QuotaDrawOptions) {
    this.options = options;
  }

  /**
   * Whether the write is worth sending again: `cell` was given share; or a copy changed under the draw (the
   * quota controller dividing unused share again, or another draw), which may have given it share itself;
   * or its own copy has unused share already (given a moment ago: the cell's admission reads its quotas
   * from a cache that may not have the new limit yet).
   */
  async drawTo(cell: string, namespace: string, refusal: QuotaRefusal): Promise<boolean> {
    const key = `${cell}/${namespace}/${refusal.quota}`;
    const running = this.inFlight.get(key);
    if (running) {
      await running.catch(() => false);
      return true;
    }
    const draw = this.draw(cell, namespace, refusal);
    this.inFlight.set(key, draw);
    try {
      return await draw;
    } finally {
      this.inFlight.delete(key);
    }
  }

  private async draw(cell: string, namespace: string, refusal: QuotaRefusal): Promise<boolean> {
    const now = this.options.now ?? Date.now;
    const started = now();
    const cells = this.options.cells();
    const to = cells.find((candidate) => candidate.id === cell);
    if (!to) return false;
    const log = this.options.logger.child({ cell, namespace });
    const copies = await Promise.all(
      cells.map(async (each) => ({
        cell: each,
        copies: await listQuotaCopies(each.client, namespace).catch((error: unknown) => {
          log.warn(
            { from: each.id, err: errorMessage(error) },
            'quota copies not listed; not drawing from that cell',
          );
          return [] as ResourceQuota[];
        }),
      })),
    );
    let contended = false;
    // Only the quota that refused, and only the names the write asked for: the rest stays where it is.
    const own = copies.find((entry) => entry.cell.id === cell)?.copies ?? [];
    // A share changed a moment ago in any cell: the controller may be dividing unused share again (lowered
    // there, not yet raised here), so finding nothing to take now is no answer yet.
    const settling = copies.some(({ copies: list }) =>
      list.some(
        (copy) =>
          copy.metadata.name === refusal.quota &&
          started - (changedAtOf(copy) ?? -Infinity) < QUOTA_SETTLING_MS,
      ),
    );
    const refusing = own.find((copy) => copy.metadata.name === refusal.quota);
    if (!refusing) return settling;
    const roomAlready = hasRoom(refusing, refusal.names);
    const holders = copies.flatMap(({ cell: each, copies: list }) => {
      const copy = list.find((candidate) => candidate.metadata.name === refusal.quota);
      return copy?.status?.used ? [{ cell: each, copy }] : [];
    });
    const takes = drawFrom(
      holders.map(({ cell: each, copy }) => ({
        cell: each.id,
        hard: parseResourceList(copy.spec?.hard),
        used: parseResourceList(copy.status?.used),
      })),
      cell,
      refusal.names,
    );
    const taken = new Map<string, bigint>();
    const at = new Date(now());
    await Promise.all(
      holders.map(async ({ cell: from, copy }) => {
        const take = takes.get(from.id);
        if (!take) return;
        try {
          const lowered = await writeShare(from.client, copy, {
            share: minus(shareOf(copy) ?? new Map(), take),
            hard: minus(parseResourceList(copy.spec?.hard), take),
            drawnAt: at,
            at,
          });
          // What the cell admitted between the lowered spec and its status (its admission still read the
          // old limit) stays the cell's: only the rest was taken.
          const used = parseResourceList(lowered.status?.used);
          const hard = parseResourceList(lowered.status?.hard);
          for (const [resource, amount] of take) {
            const over = (used.get(resource) ?? 0n) - (hard.get(resource) ?? 0n);
            const kept = amount - (over > 0n ? over : 0n);
            if (kept > 0n) taken.set(resource, (taken.get(resource) ?? 0n) + kept);
          }
        } catch (error) {
          // Its use or share changed meanwhile: nothing taken from it this time.
          if (isConflict(error)) contended = true;
          log.info(
            { from: from.id, quota: refusal.quota, err: errorMessage(error) },
            'quota share not drawn from a cell',
          );
        }
      }),
    );
    let given = false;
    if (taken.size > 0) {
      if (now() - started > (this.options.giveWithinMs ?? 5000)) {
        log.warn({ quota: refusal.quota }, 'quota draw too slow to give; the controller hands the share out');
        return false;
      }
      given = await this.give(to, namespace, refusal.quota, taken, new Date(now()), log);
    }
    return given || contended || roomAlready || settling;
  }

  private async give(
    to: DrawCell,
    namespace: string,
    name: string,
    taken: Amounts,
    at: Date,
    log: Logger,
  ): Promise<boolean> {
    const path = resourcePath(RESOURCE_QUOTAS, namespace, name);
    for (let attempt = 0; attempt < 4; attempt++) {
      const copy = await to.client.request<ResourceQuota>('GET', path);
      let written: ResourceQuota;
      try {
        written = await putShare(to.client, copy, {
          share: plus(shareOf(copy) ?? new Map(), taken),
          hard: plus(parseResourceList(copy.spec?.hard), taken),
          at,
        });
      } catch (error) {
        if (!isConflict(error)) throw error;
        continue;
      }
      // Given: a failure from here on only delays it (the cell's quota controller puts it in force too).
      await enforce(to.client, written);
      log.info({ quota: name }, 'quota share drawn to the cell');
      return true;
    }
    log.warn({ quota: name }, 'quota share not given after conflicts; the controller hands it out');
    return false;
  }
}

/** Whether a copy has unused share of any of these names. */
function hasRoom(copy: ResourceQuota, names: readonly string[]): boolean {
  const used = parseResourceList(copy.status?.used);
  const hard = parseResourceList(copy.status?.hard);
  return names.some((name) => (hard.get(name) ?? 0n) > (used.get(name) ?? 0n));
}

function minus(from: Amounts, amounts: Amounts): Map<string, bigint> {
  const result = new Map(from);
  for (const [name, amount] of amounts) result.set(name, (result.get(name) ?? 0n) - amount);
  return result;
}

function plus(to: Amounts, amounts: Amounts): Map<string, bigint> {
  const result = new Map(to);
  for (const [name, amount] of amounts) result.set(name, (result.get(name) ?? 0n) + amount);
  return result;
}
