import {
  MANAGER_USAGE,
  ControllerConfigSchema,
  durationFlag,
  issuesLine,
  positiveIntFlag,
  readControllerFlags,
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
}).strict();

export type RebalanceConfig = z.output<typeof RebalanceConfigSchema>;

export const USAGE = `usage: rebalance-controller [options]
  --window N                       objects moved at once at most (default 32)
  --rate N                         moves started per second at most (default: no limit)
  --delete-after DURATION          how long an old copy stays after its move (default 12h)
  --scan-qps N                     objects per second taken from the low-priority scan lane (default 1000)
  --mirror-resync DURATION         how often each cell is compared with the control plane's shared
                                   objects although no namespace or CRD changed (default 60s)
  --collector-resync DURATION      how often an object with held owner references is checked again for
                                   owners gone from the control plane, which are not watched (default 60s)
  --follow-pod-references BOOL     keep in each cell the ConfigMaps and Secrets its workloads' pod templates
                                   name where they live elsewhere; needs get on them in the control plane
                                   (default true)
${MANAGER_USAGE}`;

/** Reads the command line into the config; every problem in one line. */
export function parseRebalanceArgs(argv: string[]): RebalanceConfig {
  let flags: ReturnType<typeof readControllerFlags>;
  try {
    flags = readControllerFlags('rebalance-controller', argv, [
      'window',
      'rate',
      'delete-after',
      'scan-qps',
      'mirror-resync',
      'collector-resync',
      'follow-pod-references',
    ]);
  } catch (error) {
    throw new RebalanceError(RebalanceErrorCode.InvalidConfig, (error as Error).message);
  }
  const { values, common } = flags;
  const follow = values['follow-pod-references'];
  if (follow !== undefined && follow !== 'true' && follow !== 'false')
    throw new RebalanceError(
      RebalanceErrorCode.InvalidConfig,
      `--follow-pod-references must be true or false; got "${follow}"`,
    );
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  const result = RebalanceConfigSchema.safeParse({
    ...common,
    window: number(values.window),
    ratePerSecond: number(values.rate),
    deleteAfterMs: values['delete-after'],
    scanQps: number(values['scan-qps']),
    mirrorResyncMs: values['mirror-resync'],
    collectorResyncMs: values['collector-resync'],
    followPodReferences: follow === undefined ? undefined : follow === 'true',
  });
  if (result.success) return result.data;
  throw new RebalanceError(RebalanceErrorCode.InvalidConfig, issuesLine(result.error));
}
