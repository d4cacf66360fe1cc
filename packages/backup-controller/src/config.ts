import {
  controllerUsage,
  durationFlag,
  flagGroup,
  intFlag,
  optionalDurationFlag,
  type Flag,
  readControllerConfig,
  type FlagSettings,
  type ControllerConfig,
} from '@cellfed/controller-kit';

import { BackupError, BackupErrorCode } from './errors.ts';

/** The backup controller's own flags, each declared once: usage, parsing, default and the README table. */
const OWN = flagGroup({
  workers: intFlag('workers', { help: 'backups written or promoted at once', default: 16, max: 1000 }),
  resyncMs: durationFlag('resync', {
    help: 'how often every object is compared with its backup although nothing changed, in the low-priority lane',
    default: '10m',
  }),
  resyncQps: intFlag('resync-qps', {
    help: 'objects per second taken from that lane',
    default: 500,
    max: 100_000,
  }),
  /** Off (undefined) unless --auto-down-after is given. */
  autoDownAfterMs: optionalDurationFlag('auto-down-after', {
    help: 'mark a cell Down in the CellSet once its health probe has failed this long without a break',
    defaultText: 'never; an operator decides',
  }),
});

/** Everything the backup controller process is configured with; parsed once, in main.ts. */
export type BackupConfig = ControllerConfig & FlagSettings<typeof OWN>;

export const BACKUP_FLAGS: readonly Flag[] = OWN.flags;

export const USAGE = controllerUsage('backup-controller', BACKUP_FLAGS);

/** Reads the command line into the config; every problem in one line. */
export function parseBackupArgs(argv: string[]): BackupConfig {
  try {
    return readControllerConfig('backup-controller', argv, OWN);
  } catch (error) {
    throw new BackupError(BackupErrorCode.InvalidConfig, (error as Error).message, { cause: error });
  }
}
