/**
 * @cellfed/rebalance-controller — cells join and leave live: objects move behind write fences, shared
 * objects are mirrored into every cell, progress is reported in `CellSet.status`. Run it with `main.ts`;
 * the parts are exported for tests and for embedding.
 * @packageDocumentation
 */
export { RebalanceController } from './rebalance-controller.ts';
export type { RebalanceControllerOptions, RebalanceSettings } from './rebalance-controller.ts';
export { RebalanceConfigSchema, parseRebalanceArgs, USAGE } from './config.ts';
export type { RebalanceConfig } from './config.ts';
export { RebalanceError, RebalanceErrorCode } from './errors.ts';
export {
  COPIED_FROM_ANNOTATION,
  FENCED_AT_ANNOTATION,
  FIELD_MANAGER,
  MIGRATED_AT_ANNOTATION,
} from './migration-marks.ts';
export { MIRRORED_LABEL, MIRROR_HASH_ANNOTATION } from './mirror-marks.ts';
export { formatObjectKey, isCellOwnObject, resourceName } from '@cellfed/controller-kit';
export type { ObjectRef } from '@cellfed/controller-kit';
