import { type KubeObject } from '@cellfed/federation';

export const PDBS = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', namespaced: true };

type IntOrPercent = number | string;

export interface BudgetCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export interface BudgetStatus {
  observedGeneration?: number;
  disruptedPods?: Record<string, string>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions?: BudgetCondition[];
}

export interface PodDisruptionBudget extends KubeObject {
  spec?: { minAvailable?: IntOrPercent; maxUnavailable?: IntOrPercent; selector?: unknown };
  status?: BudgetStatus;
}

/** kube's names (k8s.io/api/policy/v1). */
const DISRUPTION_ALLOWED = 'DisruptionAllowed';
const SYNC_FAILED = 'SyncFailed';

/**
 * The status one apiserver's disruption controller would write for `budget` over the pods of every cell,
 * from each live cell's copy as that cell's disruption controller computed it over its own pods:
 * - `expectedPods` and `currentHealthy` are sums. Each cell counts its own pods, and its pods' controllers
 *   (whose scale an expected count reads) are in the same cell, so the sum is the federation's count;
 * - `desiredHealthy` and `disruptionsAllowed` follow from the sums and the spec by kube's own arithmetic
 *   (percentages rounded up, never below 0);
 * - `disruptedPods` is the union (a pod is in one cell);
 * - a copy whose cell failed to count it (`SyncFailed`) makes the whole status fail safe, as kube does:
 *   no disruption allowed, the cell's reason shown.
 * The condition keeps its `lastTransitionTime` while its status does not change, and conditions of other
 * types are kept, as kube's SetStatusCondition does.
 */
export function federationBudgetStatus(
  budget: PodDisruptionBudget,
  copies: readonly BudgetStatus[],
  now: Date,
): BudgetStatus {
  const expectedPods = sum(copies.map((copy) => copy.expectedPods));
  const currentHealthy = sum(copies.map((copy) => copy.currentHealthy));
  const desiredHealthy = desiredHealthyOf(budget.spec ?? {}, expectedPods);
  const failed = copies.map(syncFailed).find((condition) => condition !== undefined);
  const allowed = failed || expectedPods <= 0 ? 0 : Math.max(0, currentHealthy - desiredHealthy);
  const disruptedPods = Object.assign({}, ...copies.map((copy) => copy.disruptedPods ?? {})) as Record<
    string,
    string
  >;
  const generation = budget.metadata.generation;
  const condition: BudgetCondition = failed
    ? { type: DISRUPTION_ALLOWED, status: 'False', reason: SYNC_FAILED, message: failed.message }
    : allowed > 0
      ? { type: DISRUPTION_ALLOWED, status: 'True', reason: 'SufficientPods', message: '' }
      : { type: DISRUPTION_ALLOWED, status: 'False', reason: 'InsufficientPods', message: '' };
  const others = budget.status?.conditions?.filter((existing) => existing.type !== DISRUPTION_ALLOWED) ?? [];
  const before = budget.status?.conditions?.find((existing) => existing.type === DISRUPTION_ALLOWED);
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    ...(Object.keys(disruptedPods).length > 0 ? { disruptedPods } : {}),
    disruptionsAllowed: allowed,
    currentHealthy,
    desiredHealthy,
    expectedPods,
    conditions: [
      ...others,
      {
        ...condition,
        ...(generation === undefined ? {} : { observedGeneration: generation }),
        lastTransitionTime:
          before?.status === condition.status && before.lastTransitionTime
            ? before.lastTransitionTime
            : now.toISOString().replace(/\.\d+Z$/, 'Z'),
      },
    ],
  };
}

/** The copy's `SyncFailed` condition, when its cell could not count it (kube's failSafe). */
export function syncFailed(status: BudgetStatus): BudgetCondition | undefined {
  return status.conditions?.find(
    (condition) => condition.type === DISRUPTION_ALLOWED && condition.reason === SYNC_FAILED,
  );
}

/** Whether two statuses say the same, a condition's transition time aside. */
export function sameBudgetStatus(a: BudgetStatus | undefined, b: BudgetStatus): boolean {
  const comparable = (status: BudgetStatus | undefined) =>
    JSON.stringify({
      ...status,
      conditions: status?.conditions?.map(({ lastTransitionTime: _time, ...rest }) => sorted(rest)),
      disruptedPods: sorted(status?.disruptedPods ?? {}),
    });
  return comparable(a) === comparable(b);
}

/** kube's getExpectedPodCount, given the expected count: an absolute minAvailable, or scaled from it. */
function desiredHealthyOf(spec: NonNullable<PodDisruptionBudget['spec']>, expected: number): number {
  if (spec.maxUnavailable !== undefined) return Math.max(0, expected - scaled(spec.maxUnavailable, expected));
  if (spec.minAvailable !== undefined) return scaled(spec.minAvailable, expected);
  return 0;
}

/** intstr.GetScaledValueFromIntOrPercent with roundUp, as the disruption controller calls it. */
function scaled(value: IntOrPercent, total: number): number {
  if (typeof value === 'number') return value;
  const percent = /^(\d+)%$/.exec(value);
  if (!percent) return Number(value);
  return Math.ceil((Number(percent[1]) * total) / 100);
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + (value ?? 0), 0);
}

function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
