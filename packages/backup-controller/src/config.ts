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

import { BackupError, BackupErrorCode } from './errors.ts';

/** Everything the backup controller process is configured with; parsed once, in main.ts. */
export const BackupConfigSchema = ControllerConfigSchema.extend({
  workers: positiveIntFlag('workers', 1000).default(16),
  resyncMs: durationFlag('resync', 10 * 60_000),
  resyncQps: positiveIntFlag('resync-qps', 100_000).default(500),
  /** Off (undefined) unless --auto-down-after is given. */
  autoDownAfterMs: durationFlag('auto-down-after', 0).transform((ms) => (ms === 0 ? undefined : ms)),
}).strict();

export type BackupConfig = z.output<typeof BackupConfigSchema>;

/** The backup controller's own flags, declared once (usage, parsing and the README table). */
export const BACKUP_FLAGS: readonly Flag[] = [
  { name: 'workers', value: 'N', help: 'backups written or promoted at once', default: '16' },
  {
    name: 'resync',
    value: 'DURATION',
    help: 'how often every object is compared with its backup although nothing changed, in the low-priority lane',
    default: '10m',
  },
  { name: 'resync-qps', value: 'N', help: 'objects per second taken from that lane', default: '500' },
  {
    name: 'auto-down-after',
    value: 'DURATION',
    help: 'mark a cell Down in the CellSet once its health probe has failed this long without a break',
    default: 'never; an operator decides',
  },
];

export const USAGE = controllerUsage('backup-controller', BACKUP_FLAGS);

/** Reads the command line into the config; every problem in one line. */
export function parseBackupArgs(argv: string[]): BackupConfig {
  let flags: ReturnType<typeof readControllerFlags>;
  try {
    flags = readControllerFlags('backup-controller', argv, BACKUP_FLAGS);
  } catch (error) {
    throw new BackupError(BackupErrorCode.InvalidConfig, (error as Error).message, { cause: error });
  }
  const { values, common } = flags;
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  const result = BackupConfigSchema.safeParse({
    ...common,
    workers: number(values.workers),
    resyncMs: values.resync,
    resyncQps: number(values['resync-qps']),
    autoDownAfterMs: values['auto-down-after'],
  });
  if (result.success) return result.data;
  throw new BackupError(BackupErrorCode.InvalidConfig, issuesLine(result.error));
}
