import {
  boolFlag,
  cellUserFlag,
  controllerUsage,
  durationFlag,
  flagGroup,
  intFlag,
  positiveNumberFlag,
  type Flag,
  readControllerConfig,
  type FlagSettings,
  type ControllerConfig,
} from '@cellfed/controller-kit';

import { RebalanceError, RebalanceErrorCode } from './errors.ts';

/** The rebalance controller's own flags, each declared once: usage, parsing, default and the README table. */
const OWN = flagGroup({
  window: intFlag('window', { help: 'objects moved at once at most', default: 32, max: 1000 }),
  fenceTargetMs: durationFlag('fence-target', {
    help: 'the fence time to stay under: the number of objects moved at once adapts (up to --window) so that fences stay this short while the cells allow',
    default: '200ms',
    zero: 'no adapting, --window at once',
  }),
  ratePerSecond: positiveNumberFlag('rate', {
    help: 'moves started per second at most',
    defaultText: 'no limit',
  }),
  deleteAfterMs: durationFlag('delete-after', {
    help: 'how long an old copy stays after its move',
    default: '12h',
  }),
  scanQps: intFlag('scan-qps', {
    help: 'objects per second taken from the low-priority scan lane',
    default: 1000,
    max: 100_000,
  }),
  mirrorResyncMs: durationFlag('mirror-resync', {
    help: "how often each cell is compared with the control plane's shared objects although no namespace or CRD changed",
    default: '60s',
  }),
  collectorResyncMs: durationFlag('collector-resync', {
    help: 'how often an object with held owner references is checked again for owners gone from the control plane, which are not watched',
    default: '60s',
  }),
  followPodReferences: boolFlag('follow-pod-references', {
    help: 'keep in each cell the ConfigMaps and Secrets its workloads’ pod templates name, and the params admission policy bindings name, where they live elsewhere; needs get on them in the control plane',
    default: true,
  }),
  divideQuotas: boolFlag('divide-quotas', {
    help: "divide each control-plane ResourceQuota's limits among the cells, so each cell's quota admission refuses what would exceed the federation's; its status is counted by kube-controller-manager's quota controller through the router",
    default: true,
  }),
  sumBudgets: boolFlag('sum-budgets', {
    help: "write each control-plane PodDisruptionBudget's status from its copies in the cells; the control plane's own disruption controller must then be off",
    default: true,
  }),
  followAutoscalers: boolFlag('follow-autoscalers', {
    help: "copy each control-plane HorizontalPodAutoscaler into its target's cell, where that cell's autoscaler scales the target, and show the copy's status; the control plane's own autoscaler must then be off",
    default: true,
  }),
  finalizeNamespaces: boolFlag('finalize-namespaces', {
    help: "put the cellfed.io/cells finalizer on every control-plane namespace, so a namespace's deletion ends only once no live cell has its copy; needs patch on namespaces in the control plane",
    default: true,
  }),
  routerCellUser: cellUserFlag(
    'router',
    'the user name the router calls the cells as, where it has an identity of its own there: the reserved-marks policy and the mirrored admission policies and webhooks exempt it (its own writes: namespaces, quota shares)',
    'none (it shares this controller’s identity)',
  ),
  backupControllerCellUser: cellUserFlag(
    'backup-controller',
    'the user name the backup controller calls the cells as, where it has an identity of its own there: the write fence, the reserved-marks policy and the mirrored admission policies and webhooks exempt it (promotions and purges)',
    'none (it shares this controller’s identity)',
  ),
  followClaims: boolFlag('follow-claims', {
    help: "copy each control-plane PersistentVolumeClaim into the cell whose pod templates mount it, where it is provisioned and bound, and show the copy's status (with --follow-pod-references); the control plane's own volume binder must then be off",
    default: true,
  }),
});

/** Everything the rebalance controller process is configured with; parsed once, in main.ts. */
export type RebalanceConfig = ControllerConfig & FlagSettings<typeof OWN>;

export const REBALANCE_FLAGS: readonly Flag[] = OWN.flags;

export const USAGE = controllerUsage('rebalance-controller', REBALANCE_FLAGS);

/** Reads the command line into the config; every problem in one line. */
export function parseRebalanceArgs(argv: string[]): RebalanceConfig {
  try {
    return readControllerConfig('rebalance-controller', argv, OWN);
  } catch (error) {
    throw new RebalanceError(RebalanceErrorCode.InvalidConfig, (error as Error).message, { cause: error });
  }
}
