/**
 * @cellfed/backup-controller — an inert copy of every cellular object in the next cell clockwise, promoted
 * to the real object when the object's cell is marked Down. Run it with `main.ts`; the parts are exported
 * for tests and for embedding.
 * @packageDocumentation
 */
export { BackupController } from './backup-controller.ts';
export type { BackupControllerOptions, BackupSettings } from './backup-controller.ts';
export { BackupReconciler, FIELD_MANAGER, backupRefOf, servedCell } from './backup-reconciler.ts';
export { BackupConfigSchema, USAGE, parseBackupArgs } from './config.ts';
export type { BackupConfig } from './config.ts';
export { BackupError, BackupErrorCode } from './errors.ts';
