// Over 400 lines on purpose: one quota's division is read, settled and written in one pass whose writes
// are all conditional on what that pass read; split, the preconditions would cross files.
import {
  CELL_MADE_RESOURCES,
  FOLLOWER_LABEL,
  QUOTA_DIVIDED_ANNOTATION,
  QUOTA_SHARE_LABEL,
} from '@cellfed/api';
import {
  enforce,
  errorMessage,
  isConflict,
  isNotFound,
  readIfExists,
  writeShare,
  type Clock,
  type KubeClient,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@cellfed/controller-kit';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import type { Logger } from 'pino';
import {
  MERGE_PATCH,
  METADATA_LIST,
  RESOURCE_QUOTAS,
  resourcePath,
  resourceName,
  type KubeList,
  CELL_SYSTEM_NAMESPACES,
  cellOwnObjectName,
  UNIT,
  countedResource,
  countsObjects,
  formatResourceList,
  parseResourceList,
  sameResourceList,
  settleShares,
  type Amounts,
  type CountedResource,
  type ShareHolder,
  drawnAtOf,
  shareOf,
  withShare,
  type ResourceQuota,
} from '@cellfed/federation';

import type { NamespacedKey } from '../copies/copied-kind-controller.ts';
import type { CellEnd, CellLookup } from '../cell-end.ts';
import type { PlanHolder, RebalancePlan } from '../rebalance-plan.ts';

type Client = Pick<KubeClient, 'request'>;

/** The kinds cellfed keeps follower copies of in cells: a cell counts them, the federation does not. */
const FOLLOWED = new Set(['configmaps', 'secrets']);

export interface QuotaReconcilerOptions {
  plans: PlanHolder;
  controlPlane: Client;
  /** The control plane's quota, from its cache. */
  quota: (namespace: string, name: string) => ResourceQuota | undefined;
  /** An engaged cell. */
  cell: CellLookup;
  /** Whether cells hold follower copies (the rebalance controller keeps them), which they count and the federation does not. */
  followers: boolean;
  clock: Clock;
  /** How long a shortfall is held back after a draw (see settleShares). Default 10 s. */
  settleMs?: number;
  /** How often a quota is divided again although nothing changed. Default 10 s. */
  resyncMs?: number;
}

/**
 * Makes a control-plane ResourceQuota hold for the whole federation (docs/governance.md): keeps a copy in
 * every live cell whose `spec.hard` is that cell's share of each limit whose objects live in cells
 * (settleShares), plus what the cell holds that is not the federation's (its own `kube-root-ca.crt`,
 * follower copies, old copies of moved objects), so the cell's own quota admission refuses what would exceed
 * it; the router draws unused share into a cell whose admission refused a write the federation allows.
 *
 * It does not count: the quota's status is written by kube-controller-manager's own quota controller reading
 * the federation through the router (the chart's quota controller), as it counts on one apiserver. Once
 * every live cell holds its share in force it marks the quota divided (QUOTA_DIVIDED_ANNOTATION): the
 * chart's admission policy holds the quota controller's status writes until then, so that a status seen
 * means the cells refuse what exceeds the limit.
 */
export class QuotaReconciler implements Reconciler<NamespacedKey> {
  private readonly options: QuotaReconcilerOptions;

  constructor(options: QuotaReconcilerOptions) {
    this.options = options;
  }

  async reconcile(request: ReconcileRequest<NamespacedKey>): Promise<ReconcileResult> {
    try {
      return await this.divide(request);
    } catch (error) {
      // A draw, a cell's quota admission or its quota controller wrote a copy meanwhile: every write here is
      // conditional on what was read, so read again, soon, without counting an error.
      if (!isConflict(error)) throw error;
      request.log.debug({ err: errorMessage(error) }, 'quota changed while divided; reading it again');
      return { requeueAfterMs: 100 };
    }
  }

  private async divide({ key, signal, log }: ReconcileRequest<NamespacedKey>): Promise<ReconcileResult> {
    const { namespace, name } = key;
    const plan = this.options.plans.current();
    if (!plan) return {};
    const quota = this.options.quota(namespace, name);
    const live = plan.liveCells;
    const cells = live.flatMap((id) => this.options.cell(id) ?? []);
    const hard = parseResourceList(quota?.spec?.hard);
    const inCells = [...hard.keys()].filter((resource) => countedInCells(plan, namespace, resource));
    if (!quota || quota.metadata.deletionTimestamp || inCells.length === 0) {
      // Nothing of it for the cells to hold (it limits only what lives in the control plane, whose own
      // quota admission enforces it).
      await this.deleteCopies(cells, namespace, name, log);
      if (quota && !quota.metadata.deletionTimestamp) await this.markDivided(quota, log);
      return {};
    }
    if (cells.length < live.length) {
      // A live cell not engaged (its Secret missing, the pool starting) still admits against its copy: its
      // share is not handed to the others meanwhile.
      log.warn(
        { namespace, quota: name, cells: live.filter((id) => !cells.some((cell) => cell.id === id)) },
        'quota not divided: a live cell is not engaged',
      );
      return { requeueAfterMs: 5000 };
    }
    const resyncMs = this.options.resyncMs ?? 10_000;
    const divided = await this.divideAmongCells(plan, quota, hard, cells, inCells, signal, log);
    if (divided.inForce) await this.markDivided(quota, log);
    if (divided.pending) return { requeueAfterMs: 1000 };
    return { requeueAfterMs: Math.min(resyncMs, divided.retryAfterMs ?? resyncMs) };
  }

  /**
   * Divides the names the cells count among the live cells (all engaged) and writes their copies;
   * `inForce` once every copy is written and in force, `pending` while a cell has not counted its copy
   * against the limits in force (its share is then divided again once it has).
   */
  private async divideAmongCells(
    plan: RebalancePlan,
    quota: ResourceQuota,
    hard: Amounts,
    cells: readonly CellEnd[],
    inCells: readonly string[],
    signal: AbortSignal,
    log: Logger,
  ): Promise<{ inForce: boolean; pending: boolean; retryAfterMs: number | undefined }> {
    const { namespace = '', name = '' } = quota.metadata;
    // Read, not cached: shares are divided from what each cell holds now. A cache that has not yet seen a
    // copy this controller just wrote, or a draw, would hand a share out twice.
    const path = resourcePath(RESOURCE_QUOTAS, namespace, name);
    const read = await Promise.all(
      cells.map(async (cell) => ({
        cell,
        copy: await readIfExists<ResourceQuota>(cell.client, path, { signal }),
      })),
    );
    // A quota of that name the cell has of its own is never taken over: that cell holds no share.
    const foreign = read.filter(({ copy }) => copy && copy.metadata.labels?.[QUOTA_SHARE_LABEL] !== 'true');
    for (const { cell } of foreign)
      log.warn(
        { cell: cell.id, namespace, quota: name },
        'the cell has a quota of that name of its own; it holds no share',
      );
    const holding = read.filter((entry) => !foreign.includes(entry));
    const copies = new Map(holding.map(({ cell, copy }) => [cell.id, copy]));
    // What the control plane holds of what the cells count (its kube-root-ca.crt) is not the cells' to use.
    const controlPlaneHolds = controlPlanePart(namespace, inCells);
    const limits = new Map(
      inCells.map((resource) => [
        resource,
        max(0n, hard.get(resource)! - (controlPlaneHolds.get(resource) ?? 0n)),
      ]),
    );
    const overheads = new Map(
      await Promise.all(
        holding.map(
          async ({ cell }) =>
            [
              cell.id,
              await overhead(cell.client, plan, namespace, inCells, this.options.followers, signal),
            ] as const,
        ),
      ),
    );
    const holders: ShareHolder[] = holding.map(({ cell, copy }) => ({
      cell: cell.id,
      share: shareOf(copy),
      used: copy?.status?.used ? federationUse(copy, inCells, overheads.get(cell.id)!) : undefined,
      drawnAt: drawnAtOf(copy),
    }));
    const settled = settleShares(limits, holders, this.options.clock.now(), this.options.settleMs ?? 10_000);
    const targets = holding.map(({ cell }) => {
      const share = settled.shares.get(cell.id)!;
      return { cell, share, hard: plus(share, overheads.get(cell.id)!), log: log.child({ cell: cell.id }) };
    });
    // Lowered limits first, in force, then raised ones: no moment between the writes adds up to more than a
    // limit. A conflict (a draw, the cell's admission or quota controller wrote meanwhile) ends the pass.
    let admittedMeanwhile = false;
    for (const { cell, share, hard: cellHard, log: cellLog } of targets) {
      const copy = copies.get(cell.id);
      if (!copy) continue;
      const before = parseResourceList(copy.status?.used);
      const lowered = await this.writeCopy(
        cell,
        quota,
        copy,
        lower(shareOf(copy), share),
        lower(parseResourceList(copy.spec?.hard), cellHard),
        cellLog,
      );
      copies.set(cell.id, lowered);
      // The cell admitted a write against its old limit while it was lowered: the shares were divided from
      // a use that is no longer true. Nothing is raised on it; the next pass divides afresh.
      const after = parseResourceList(lowered.status?.used);
      if ([...after].some(([resource, amount]) => amount > (before.get(resource) ?? 0n)))
        admittedMeanwhile = true;
    }
    if (admittedMeanwhile) return { inForce: false, pending: true, retryAfterMs: undefined };
    for (const { cell, share, hard: cellHard, log: cellLog } of targets)
      copies.set(cell.id, await this.writeCopy(cell, quota, copies.get(cell.id), share, cellHard, cellLog));
    // Not counted yet (a new copy), or counted against limits not yet in force.
    const pending = holders.some((holder) => {
      const copy = copies.get(holder.cell);
      return !holder.used || !copy || !sameResourceList(copy.status?.hard, copy.spec?.hard);
    });
    return { inForce: true, pending, retryAfterMs: settled.retryAfterMs };
  }

  /**
   * Creates or updates a cell's copy to hold `share` with `hard` limits, in force; an unchanged copy is only
   * put in force if it is not yet.
   */
  private async writeCopy(
    cell: CellEnd,
    quota: ResourceQuota,
    copy: ResourceQuota | undefined,
    share: Amounts,
    hard: Amounts,
    log: Logger,
  ): Promise<ResourceQuota> {
    const { namespace = '', name = '' } = quota.metadata;
    const scopes = { scopes: quota.spec?.scopes, scopeSelector: quota.spec?.scopeSelector };
    if (!copy) {
      const fresh = withShare(
        {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name, namespace, labels: { [QUOTA_SHARE_LABEL]: 'true' } },
          spec: { ...scopes },
        },
        { share, hard, at: new Date(this.options.clock.now()) },
      );
      // In force at once, uncounted: the cell refuses what the copy limits until its own quota controller has
      // counted it ("status unknown"), so a cell that joins admits nothing its share was not counted for.
      const created = await cell.client.request<ResourceQuota>(
        'POST',
        resourcePath(RESOURCE_QUOTAS, namespace),
        {
          body: fresh,
        },
      );
      log.info({ namespace, quota: name }, 'quota copy created in the cell');
      return enforce(cell.client, created);
    }
    const sameScopes =
      JSON.stringify(scopes) ===
      JSON.stringify({ scopes: copy.spec?.scopes, scopeSelector: copy.spec?.scopeSelector });
    const recorded = shareOf(copy);
    const sameShare = recorded !== undefined && sameAmounts(recorded, share);
    if (sameScopes && sameShare && sameAmounts(parseResourceList(copy.spec?.hard), hard))
      // Written before, but perhaps not in force (the status write failed): a lowered limit must be.
      return enforce(cell.client, copy);
    const written = await writeShare(
      cell.client,
      { ...copy, spec: { ...copy.spec, ...scopes } },
      { share, hard, at: new Date(this.options.clock.now()) },
    );
    log.info(
      { namespace, quota: name, hard: formatResourceList(hard, quota.spec?.hard) },
      'quota share updated in the cell',
    );
    return written;
  }

  /**
   * Marks the control-plane quota divided: its status may be written from now on. The mark is the quota's
   * uid (a manifest copied from another quota carries no valid one), written under the version read, so a
   * spec changed meanwhile is divided before it is marked.
   */
  private async markDivided(quota: ResourceQuota, log: Logger): Promise<void> {
    const { namespace = '', name = '', uid, resourceVersion } = quota.metadata;
    if (!uid || quota.metadata.annotations?.[QUOTA_DIVIDED_ANNOTATION] === uid) return;
    try {
      await this.options.controlPlane.request('PATCH', resourcePath(RESOURCE_QUOTAS, namespace, name), {
        body: { metadata: { resourceVersion, annotations: { [QUOTA_DIVIDED_ANNOTATION]: uid } } },
        contentType: MERGE_PATCH,
      });
    } catch (error) {
      // Gone meanwhile: nothing to mark.
      if (isNotFound(error)) return;
      throw error;
    }
    log.info({ namespace, quota: name }, 'quota divided: every live cell holds its share, in force');
  }

  private async deleteCopies(
    cells: readonly CellEnd[],
    namespace: string,
    name: string,
    log: Logger,
  ): Promise<void> {
    const path = resourcePath(RESOURCE_QUOTAS, namespace, name);
    for (const cell of cells) {
      const copy = await readIfExists<ResourceQuota>(cell.client, path);
      // Only cellfed's copy: a quota of that name the cell has of its own stays.
      if (copy?.metadata.labels?.[QUOTA_SHARE_LABEL] !== 'true') continue;
      try {
        await cell.client.request('DELETE', path, { body: { preconditions: { uid: copy.metadata.uid } } });
        log.info({ cell: cell.id, namespace, quota: name }, 'quota copy deleted from the cell');
      } catch (error) {
        // Gone already.
        if (!isNotFound(error)) throw error;
      }
    }
  }
}

/**
 * What the control plane holds of each object-count name the cells count: what every apiserver makes for
 * itself in a namespace (`kube-root-ca.crt`), taken to be there (its controller manager makes it within
 * moments of the namespace). Nothing else of a cellular resource is stored in the control plane.
 */
function controlPlanePart(namespace: string, names: readonly string[]): Map<string, bigint> {
  const part = new Map<string, bigint>();
  for (const name of names)
    if (countsObjects(name) && cellOwnObjectName(countedResource(name)!, namespace)) part.set(name, UNIT);
  return part;
}

/**
 * Whether a quota name's objects live in cells (a cellular resource, or one the cells' controllers make),
 * so each cell counts and limits its own. Quotas themselves, everything in a system namespace and every
 * other resource live in the control plane.
 */
export function countedInCells(plan: Pick<RebalancePlan, 'spec'>, namespace: string, name: string): boolean {
  const resource = countedResource(name);
  if (!resource || CELL_SYSTEM_NAMESPACES.has(namespace)) return false;
  const same = (candidate: CountedResource) =>
    candidate.group === resource.group && candidate.resource === resource.resource;
  return plan.spec.cellularResources.some(same) || CELL_MADE_RESOURCES.some(same);
}

/**
 * How many objects of each object-count name's resource a cell holds that are not the federation's: follower
 * copies, old copies of moving and moved objects (labelled `migrating` or `migrated`, kept until
 * `--delete-after`), and what its apiserver made for itself (`kube-root-ca.crt`). Other names count nothing
 * of them (an old copy's pods are gone with its quiesce).
 */
async function overhead(
  client: Client,
  plan: Pick<RebalancePlan, 'resources'>,
  namespace: string,
  names: readonly string[],
  followers: boolean,
  signal: AbortSignal,
): Promise<Map<string, bigint>> {
  const counts = new Map<string, bigint>();
  const byResource = new Map<string, bigint>();
  const count = async (path: string, labelSelector: string) =>
    BigInt(
      (
        await client.request<KubeList>('GET', path, {
          query: { labelSelector },
          accept: METADATA_LIST,
          signal,
        })
      ).items?.length ?? 0,
    );
  for (const name of names) {
    if (!countsObjects(name)) continue;
    const resource = countedResource(name)!;
    const id = resourceName(resource);
    if (!byResource.has(id)) {
      const moved = plan.resources.get(id);
      const version = moved?.version ?? (resource.group === '' ? 'v1' : undefined);
      let found = 0n;
      if (version) {
        const path = resourcePath({ ...resource, version, namespaced: true }, namespace);
        // A copy being moved out (fenced, then migrated) is the new copy's to count: the move's create in the
        // new cell takes the share this one frees.
        if (moved) found += await count(path, `${REBALANCE_STATUS_LABEL} in (${MIGRATING},${MIGRATED})`);
        if (followers && resource.group === '' && FOLLOWED.has(resource.resource))
          found += await count(path, FOLLOWER_LABEL);
        // What every apiserver makes for itself in a namespace is taken to be there (its controller manager
        // makes it within moments of the namespace), not read: no right to read it is needed.
        if (cellOwnObjectName(resource, namespace)) found++;
      }
      byResource.set(id, found * UNIT);
    }
    counts.set(name, byResource.get(id)!);
  }
  return counts;
}

/** What a copy's cell uses of the federation's: its counted use less its overhead, by name. */
function federationUse(
  copy: ResourceQuota,
  names: readonly string[],
  overheadOf: Amounts,
): Map<string, bigint> {
  const used = parseResourceList(copy.status?.used);
  return new Map(names.map((name) => [name, max(0n, (used.get(name) ?? 0n) - (overheadOf.get(name) ?? 0n))]));
}

function plus(a: Amounts, b: Amounts): Map<string, bigint> {
  const result = new Map(a);
  for (const [name, amount] of b) if (result.has(name)) result.set(name, result.get(name)! + amount);
  return result;
}

/**
 * `target` where it is lower than `current`, `current` elsewhere: the first of two writes. A name `current`
 * lacks is no limit at all, so its target is lower; a name `target` lacks stays until the second write.
 */
function lower(current: Amounts | undefined, target: Amounts): Map<string, bigint> {
  const result = new Map(current ?? []);
  for (const [name, amount] of target) {
    const now = current?.get(name);
    result.set(name, now === undefined || amount < now ? amount : now);
  }
  return result;
}

function sameAmounts(a: Amounts, b: Amounts): boolean {
  return a.size === b.size && [...a].every(([name, amount]) => b.get(name) === amount);
}

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);
