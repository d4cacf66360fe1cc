import {
  ControllerConfigSchema,
  controllerUsage,
  durationFlag,
  issuesLine,
  positiveIntFlag,
  readControllerFlags,
  type Flag,
} from '@cellfed/controller-kit';
import { z } from 'zod';

import { RebalanceError, RebalanceErrorCode } from './errors.ts';

/** Everything the rebalance controller process is configured with; parsed once, in main.ts. */
export const RebalanceConfigSchema = ControllerConfigSchema.extend({
  window: positiveIntFlag('window', 1000).default(32),
  ratePerSecond: z
    .number({ error: '--rate must be a number of objects per second' })
    .positive({ error: '--rate must be above 0' })
    .optional(),
  deleteAfterMs: durationFlag('delete-after', 12 * 3_600_000),
  scanQps: positiveIntFlag('scan-qps', 100_000).default(1000),
  mirrorResyncMs: durationFlag('mirror-resync', 60_000),
  collectorResyncMs: durationFlag('collector-resync', 60_000),
  followPodReferences: z.boolean().default(true),
  divideQuotas: z.boolean().default(true),
  sumBudgets: z.boolean().default(true),
  followAutoscalers: z.boolean().default(true),
  followClaims: z.boolean().default(true),
}).strict();

export type RebalanceConfig = z.output<typeof RebalanceConfigSchema>;

/** The rebalance controller's own flags, declared once (usage, parsing and the README table). */
export const REBALANCE_FLAGS: readonly Flag[] = [
  { name: 'window', value: 'N', help: 'objects moved at once at most', default: '32' },
  { name: 'rate', value: 'N', help: 'moves started per second at most', default: 'no limit' },
  {
    name: 'delete-after',
    value: 'DURATION',
    help: 'how long an old copy stays after its move',
    default: '12h',
  },
  {
    name: 'scan-qps',
    value: 'N',
    help: 'objects per second taken from the low-priority scan lane',
    default: '1000',
  },
  {
    name: 'mirror-resync',
    value: 'DURATION',
    help: "how often each cell is compared with the control plane's shared objects although no namespace or CRD changed",
    default: '60s',
  },
  {
    name: 'collector-resync',
    value: 'DURATION',
    help: 'how often an object with held owner references is checked again for owners gone from the control plane, which are not watched',
    default: '60s',
  },
  {
    name: 'follow-pod-references',
    value: 'BOOL',
    help: 'keep in each cell the ConfigMaps and Secrets its workloads’ pod templates name, and the params admission policy bindings name, where they live elsewhere; needs get on them in the control plane',
    default: 'true',
  },
  {
    name: 'divide-quotas',
    value: 'BOOL',
    help: "divide each control-plane ResourceQuota's limits among the cells, so each cell's quota admission refuses what would exceed the federation's; its status is counted by kube-controller-manager's quota controller through the router",
    default: 'true',
  },
  {
    name: 'sum-budgets',
    value: 'BOOL',
    help: "write each control-plane PodDisruptionBudget's status from its copies in the cells; the control plane's own disruption controller must then be off",
    default: 'true',
  },
  {
    name: 'follow-autoscalers',
    value: 'BOOL',
    help: "copy each control-plane HorizontalPodAutoscaler into its target's cell, where that cell's autoscaler scales the target, and show the copy's status; the control plane's own autoscaler must then be off",
    default: 'true',
  },
  {
    name: 'follow-claims',
    value: 'BOOL',
    help: "copy each control-plane PersistentVolumeClaim into the cell whose pod templates mount it, where it is provisioned and bound, and show the copy's status (with --follow-pod-references); the control plane's own volume binder must then be off",
    default: 'true',
  },
];

export const USAGE = controllerUsage('rebalance-controller', REBALANCE_FLAGS);

/** Reads the command line into the config; every problem in one line. */
export function parseRebalanceArgs(argv: string[]): RebalanceConfig {
  let flags: ReturnType<typeof readControllerFlags>;
  try {
    flags = readControllerFlags('rebalance-controller', argv, REBALANCE_FLAGS);
  } catch (error) {
    throw new RebalanceError(RebalanceErrorCode.InvalidConfig, (error as Error).message);
  }
  const { values, common } = flags;
  const bool = (name: string): boolean | undefined => {
    const value = values[name];
    if (value === undefined) return undefined;
    if (value !== 'true' && value !== 'false')
      throw new RebalanceError(
        RebalanceErrorCode.InvalidConfig,
        `--${name} must be true or false; got "${value}"`,
      );
    return value === 'true';
  };
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  const result = RebalanceConfigSchema.safeParse({
    ...common,
    window: number(values.window),
    ratePerSecond: number(values.rate),
    deleteAfterMs: values['delete-after'],
    scanQps: number(values['scan-qps']),
    mirrorResyncMs: values['mirror-resync'],
    collectorResyncMs: values['collector-resync'],
    followPodReferences: bool('follow-pod-references'),
    divideQuotas: bool('divide-quotas'),
    sumBudgets: bool('sum-budgets'),
    followAutoscalers: bool('follow-autoscalers'),
    followClaims: bool('follow-claims'),
  });
  if (result.success) return result.data;
  throw new RebalanceError(RebalanceErrorCode.InvalidConfig, issuesLine(result.error));
}
