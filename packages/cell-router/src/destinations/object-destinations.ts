import { needsOldCopy, resolveTarget, type OldCopy } from '@cellfed/hashing';
import { type KubeClient } from '@cellfed/controller-kit';
import { madeByItsCell } from '@cellfed/federation';

import { findCellMade } from './cell-made.ts';
import type { RoutingState } from '../routing/route-plan.ts';
import { cellFailure, internalError, serviceUnavailable } from '../status/kube-status.ts';
import { publicErrorMessage } from '../status/public-error.ts';
import type { Authorize } from '../auth/request-authorization.ts';
import { RETRY_SOON, refusal, type Destination, type FromBackup } from '../routing/destination.ts';

type CellDestination = Extract<Destination, { kind: 'cell' }>;
import {
  cellLeftRefusal,
  fenceRefusal,
  restoringRefusal,
  type ObjectPlan,
} from '../routing/object-refusals.ts';
import type { OldCopies } from './old-copies.ts';
import { failoverState, type FailoverState } from './pending-backups.ts';
import type { PromotionRequests } from './promotion-requests.ts';
import { type Impersonation } from '../auth/impersonation.ts';

export interface ObjectDestinationsOptions {
  readonly state: () => RoutingState | undefined;
  /** The client of an engaged cell. */
  readonly cell: (id: string) => KubeClient | undefined;
  readonly oldCopies: OldCopies;
  /** Puts a Down cell's key a client waits to write at the front of the promotions; none: it waits its turn. */
  readonly promotions?: PromotionRequests | undefined;
}

/**
 * The routing rule carried out for one cellular object: old or new cell by the old copy's label, a fence,
 * or — for a key whose cell is Down — its backup until the backup is promoted.
 */
export class ObjectDestinations {
  private readonly options: ObjectDestinationsOptions;

  constructor(options: ObjectDestinationsOptions) {
    this.options = options;
  }

  /**
   * Where the request goes, or its refusal. A refusal the router makes itself tells what the cells hold (a
   * move, a restore, a cell's state) and is given only to a caller allowed the request (`authorize`), and so
   * is the old copy's reading of a key that may be moving; any other caller gets the 403 one apiserver would
   * give. A refusal a cell gave the caller is its own. A write refused because its key's promotion is not
   * committed asks for that promotion to go first, only once the caller is known to be allowed the write.
   */
  async of(plan: ObjectPlan, impersonation: Impersonation, authorize: Authorize): Promise<Destination> {
    // The old copy is read as the router, and which cell then answers tells whether it exists and moves:
    // only for a caller allowed the request.
    if (needsOldCopy(plan.decision)) {
      const refused = await authorize();
      if (refused) return refused;
    }
    const destination = await this.route(plan, impersonation);
    if (destination.kind !== 'refuse' || destination.route === 'backup-refused') return destination;
    const refused = await authorize();
    if (refused) return refused;
    if (destination.promote) this.requestPromotion(destination.cell, destination.promote.backup);
    return destination;
  }

  private requestPromotion(cell: string, backup: string): void {
    const client = this.options.cell(cell);
    if (client) this.options.promotions?.request(client, cell, backup);
  }

  private async route(plan: ObjectPlan, impersonation: Impersonation): Promise<Destination> {
    const { decision, access, info } = plan;
    const routeCase = decision.case;
    let oldCopy: OldCopy | undefined;
    if (needsOldCopy(decision)) {
      try {
        oldCopy = await this.options.oldCopies.get(decision.oldCell, info, access);
      } catch (error) {
        if (this.hasLeft(decision.oldCell)) return cellLeftRefusal(plan, decision.oldCell);
        const status = serviceUnavailable(
          `cannot tell whether ${info.resource} "${info.name}" has moved: cell ${decision.oldCell}: ${publicErrorMessage(error)}`,
          1,
        );
        return {
          ...refusal(status, 'old-copy-unreadable', decision.oldCell),
          routeCase,
          headers: RETRY_SOON,
        };
      }
    }
    const target = resolveTarget(decision, access, oldCopy);
    if (target.action === 'fence')
      return fenceRefusal(plan, target.cell, target.reason, routeCase, target.retryAfterSeconds);
    const client = this.options.cell(target.cell);
    if (!client) {
      if (this.hasLeft(target.cell)) return cellLeftRefusal(plan, target.cell);
      const status = serviceUnavailable(`cell ${target.cell} is not connected`, 1);
      return { ...refusal(status, 'cell-unavailable', target.cell), routeCase, headers: RETRY_SOON };
    }
    const down = plan.failedOverFrom;
    if (!down) return { kind: 'cell', client, cell: target.cell, route: target.reason, routeCase };
    const toTarget = () => this.failover(plan, down, client, target.cell, impersonation);
    // While a rebalance runs, a Down cell's key is promoted in its old cell, where its backup is, and moves
    // on only once it is a real object there: until then that backup is the object, though the old cell
    // has no copy and the rule names the new cell.
    const backupHolder =
      oldCopy?.found === false && target.cell !== decision.oldCell
        ? this.options.cell(decision.oldCell)
        : undefined;
    return backupHolder
      ? this.failover(plan, down, backupHolder, decision.oldCell, impersonation, toTarget)
      : toTarget();
  }

  /**
   * For an object its cell answered 404 for, of a resource cells' controllers also make (a CronJob's Job):
   * the cell that made it, where it is, if one did. Only a copy with its cell's native controller reference
   * counts: anything else elsewhere is a leftover or an in-progress copy, which the routing rule hides.
   */
  async madeElsewhere(
    plan: ObjectPlan,
    answered: string,
    impersonation: Impersonation,
    signal?: AbortSignal,
  ): Promise<CellDestination | undefined> {
    const state = this.options.state();
    if (!plan.alsoMadeByCells || !state) return undefined;
    const others = state.liveCells.filter((cell) => cell !== answered);
    const holder = await findCellMade(
      plan.info,
      others,
      (id) => this.options.cell(id),
      impersonation,
      signal,
      madeByItsCell,
    );
    // A cell that did not answer may hold it: the ring cell's 404 is still the best answer there is.
    if (holder.kind !== 'found') return undefined;
    const client = this.options.cell(holder.source);
    return (
      client && {
        kind: 'cell',
        client,
        cell: holder.source,
        route: 'made-in-cell',
        routeCase: plan.decision.case,
      }
    );
  }

  /**
   * Whether `cell` is no longer live in the routing state as it is now: the CellSet changed (a drained cell
   * left, a cell went Down) after this request was planned with it.
   */
  hasLeft(cell: string): boolean {
    const now = this.options.state();
    return now !== undefined && !now.liveCells.includes(cell);
  }

  /**
   * A key of a Down cell: the cell that took it over, or the backup it holds until the promotion is committed.
   * `elsewhere`: where the request goes when this cell holds neither the object nor its backup.
   */
  private async failover(
    plan: ObjectPlan,
    down: string,
    client: KubeClient,
    cell: string,
    impersonation: Impersonation,
    elsewhere?: () => Promise<Destination>,
  ): Promise<Destination> {
    const { info, access } = plan;
    const routeCase = plan.decision.case;
    let state: FailoverState;
    try {
      state = await failoverState(client, info, down, cell, impersonation);
    } catch (error) {
      const status = serviceUnavailable(
        `cannot tell whether ${info.resource} "${info.name}" of down cell ${down} is restored in cell ${cell}: ${publicErrorMessage(error)}`,
        1,
      );
      return { ...refusal(status, 'backup-unreadable', cell), routeCase };
    }
    if (state.kind === 'none' && elsewhere) return elsewhere();
    if (state.kind === 'refused')
      return { ...refusal(cellFailure(cell, state.code, state.body), 'backup-refused', cell), routeCase };
    if (state.kind === 'unreadable') {
      const status = internalError(
        `${info.resource} "${info.name}" of down cell ${down} has a backup in cell ${cell} that cannot be read`,
      );
      return { ...refusal(status, 'backup-corrupt', cell), routeCase };
    }
    // Created but not committed: reads go to the real object; writes wait for its field managers.
    if (state.kind === 'promoting' && access !== 'read') return restoringRefusal(plan, { cell, routeCase });
    if (state.kind !== 'backup') return { kind: 'cell', client, cell, route: 'failed-over', routeCase };
    const readable = access === 'read' && (info.subresource === '' || info.subresource === 'status');
    const fromBackup: FromBackup = {
      kind: 'backup',
      object: state.object,
      cell,
      route: 'failover-backup',
      routeCase,
    };
    if (readable) return fromBackup;
    // A client waits to write it: its key is promoted first, unless a router asked already.
    const promote = access !== 'read' && !state.promotionRequested;
    return {
      ...restoringRefusal(plan, fromBackup),
      ...(promote ? { promote: { backup: state.name } } : {}),
    };
  }
}
