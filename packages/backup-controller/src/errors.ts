import { CodedError } from '@cellfed/controller-kit/errors';

/** Stable codes for everything the backup controller fails with. */
export const BackupErrorCode = {
  /** The command line or configuration did not parse; the message lists every problem. */
  InvalidConfig: 'CELLFED_BACKUP_INVALID_CONFIG',
  /** A cell the backup or the promotion needs is not engaged (no client yet, or it left). */
  CellNotEngaged: 'CELLFED_BACKUP_CELL_NOT_ENGAGED',
  /** A backup to promote holds no object that parses (its `spec.data` is not an object's JSON). */
  UnreadableBackup: 'CELLFED_BACKUP_UNREADABLE_BACKUP',
  /**
   * The CellBackup at an object's name holds another object's key (made by hand: the names are a
   * cryptographic hash of the key). It is neither written over, deleted nor promoted for this object.
   */
  BackupNameTaken: 'CELLFED_BACKUP_NAME_TAKEN',
} as const;

export type BackupErrorCode = (typeof BackupErrorCode)[keyof typeof BackupErrorCode];

export class BackupError extends CodedError<BackupErrorCode> {
  override readonly name: string = 'BackupError';
}
