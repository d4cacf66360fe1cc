import type { CellAware, Clock, EngagedCell } from '@cellfed/controller-kit';
import { errorMessage, readIfExists, realClock, selfUserName, sleep } from '@cellfed/controller-kit';
import { MARKS_POLICY_NAME, exemptComponentUsers, type KubeObject } from '@cellfed/federation';
import type { Logger } from 'pino';

const MARKS_POLICY_PATH = `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${MARKS_POLICY_NAME}`;

/**
 * The user names cellfed's components call the cells as, which the cells' reserved-marks and mirrored
 * admission policies exempt: the router serves no caller by one (auth/admission.ts). Those it is given
 * (`--<component>-cell-user`), its own in every engaged cell, as that cell tells it (a
 * SelfSubjectReview): so it refuses its own name however it was configured, the shared identity of all
 * three components too, where no name was given; and every name the cell's marks policy exempts, as the
 * rebalance controller wrote it (federation's COMPONENT_USERS_ANNOTATION, read again every
 * `policyRefreshMs`): so whatever a cell exempts, the router refuses, whatever it was told.
 */
export class ComponentUsers implements CellAware {
  private readonly configured: ReadonlySet<string>;
  private readonly ownByCell = new Map<string, string>();
  private readonly exemptByCell = new Map<string, readonly string[]>();
  /** The configured names and every cell's answer together (see `has`). */
  private known: ReadonlySet<string>;
  private readonly log: Logger;
  private readonly retryMs: number;
  private readonly policyRefreshMs: number;
  private readonly clock: Clock;

  /** `--router-cell-user`: the name the cells' policies exempt as the router's, told apart from what a cell says. */
  private readonly routerCellUser: string | undefined;

  constructor(options: {
    configured: readonly string[];
    routerCellUser?: string | undefined;
    logger: Logger;
    retryMs?: number;
    policyRefreshMs?: number;
    clock?: Clock;
  }) {
    this.configured = new Set(options.configured);
    this.known = this.configured;
    this.routerCellUser = options.routerCellUser;
    this.log = options.logger;
    this.retryMs = options.retryMs ?? 5_000;
    this.policyRefreshMs = options.policyRefreshMs ?? 30_000;
    this.clock = options.clock ?? realClock;
  }

  /** Asked per request: a set kept as the cells' answers come and go, not a walk over the cells. */
  has(username: string): boolean {
    return this.known.has(username);
  }

  private refreshKnown(): void {
    this.known = new Set([
      ...this.configured,
      ...this.ownByCell.values(),
      ...[...this.exemptByCell.values()].flat(),
    ]);
  }

  /**
   * Asks the cell who the router is there, again every `retryMs` until it answers, then follows the names its
   * marks policy exempts, read again every `policyRefreshMs`; all forgotten when the cell goes.
   */
  async engage(cell: EngagedCell): Promise<void> {
    cell.signal.addEventListener(
      'abort',
      () => {
        this.ownByCell.delete(cell.id);
        this.exemptByCell.delete(cell.id);
        this.refreshKnown();
      },
      { once: true },
    );
    await this.repeat(cell, this.retryMs, 'could not ask the cell who the router is there', () =>
      this.learnOwnName(cell),
    );
    await this.repeat(
      cell,
      this.policyRefreshMs,
      'could not read which components the cell exempts; asking again',
      async () => {
        await this.readExemptions(cell);
        return false;
      },
    );
  }

  /** Runs `step` every `everyMs` until it answers true or the cell goes; a failed step is logged as `failed`. */
  private async repeat(
    cell: EngagedCell,
    everyMs: number,
    failed: string,
    step: () => Promise<boolean>,
  ): Promise<void> {
    while (!cell.signal.aborted) {
      try {
        if (await step()) return;
      } catch (error) {
        if (cell.signal.aborted) return;
        this.log.warn({ cell: cell.id, err: errorMessage(error) }, failed);
      }
      await sleep(this.clock, everyMs, cell.signal);
    }
  }

  /** Whether the cell said who the router is there (then refused as a caller). */
  private async learnOwnName(cell: EngagedCell): Promise<boolean> {
    const own = await selfUserName(cell.client, cell.signal);
    if (!own) {
      this.log.warn({ cell: cell.id }, 'the cell did not say who the router is there; asking again');
      return false;
    }
    this.ownByCell.set(cell.id, own);
    this.refreshKnown();
    this.log.info({ cell: cell.id, user: own }, 'the router’s own user in the cell: refused as a caller');
    if (this.routerCellUser !== undefined && own !== this.routerCellUser)
      this.log.warn(
        { cell: cell.id, user: own, routerCellUser: this.routerCellUser },
        'the cell knows the router by another name than --router-cell-user: the cells’ policies exempt that one, not this',
      );
    return true;
  }

  /** The names the cell's marks policy exempts, now (none until the rebalance controller wrote it). */
  private async readExemptions(cell: EngagedCell): Promise<void> {
    const policy = await readIfExists<KubeObject>(cell.client, MARKS_POLICY_PATH, { signal: cell.signal });
    const users = exemptComponentUsers(policy);
    if (JSON.stringify(users) === JSON.stringify(this.exemptByCell.get(cell.id) ?? [])) return;
    this.exemptByCell.set(cell.id, users);
    this.refreshKnown();
    this.log.info(
      { cell: cell.id, users },
      'the cell’s marks policy exempts these components: refused as callers',
    );
  }
}
