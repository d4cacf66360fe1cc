/**
 * @cellfed/hashing — which cell owns a Kubernetes object, now and after a change, and which cell holds its
 * backup. Pure: no Kubernetes client, no I/O. The package README specifies the algorithm.
 * @packageDocumentation
 */
export { HashRing, DEFAULT_POINTS_PER_WEIGHT, MAX_CELLS, MAX_POINTS, MAX_WEIGHT } from './ring';
export type { Placement, RingCell, RingOptions } from './ring';
export { hash64, hash64Hex } from './key-hash';
export { objectKey, shardByForNamespace, isShardBy, SHARD_BY_LABEL } from './object-key';
export type { ObjectRef, ShardBy } from './object-key';
export { RoutingTable } from './routing-table';
export type { RouteCase, RouteDecision } from './routing-table';
export {
  REBALANCE_STATUS_LABEL,
  MIGRATING,
  MIGRATED,
  DEFAULT_RETRY_AFTER_SECONDS,
  needsOldCopy,
  resolveTarget,
} from './rebalance-status';
export type { Access, OldCopy, Target, TargetReason } from './rebalance-status';
export { planMigration, optimalMovedFraction } from './migration-plan';
export type { CellCounts, Flow, MigrationPlan, Move, PlanOptions } from './migration-plan';
export {
  CELLSET_API_VERSION,
  CELLSET_KIND,
  CELLSET_RULES,
  CELL_STATES,
  DEFAULT_CELLSET_NAME,
  DEFAULT_CELLULAR_RESOURCES,
  DEFAULT_SECRET_KEY,
  DEFAULT_SECRET_NAMESPACE,
  CellSchema,
  CellSetSchema,
  CellSetSpecSchema,
  CellStateSchema,
  GroupVersionResourceSchema,
  SecretRefSchema,
  parseCellSet,
  parseCellSetSpec,
  safeParseCellSet,
} from './cell-set';
export type {
  Cell,
  CellSet,
  CellSetInput,
  CellSetSpec,
  CellSetSpecInput,
  CellState,
  GroupVersionResource,
} from './cell-set';
export { HashingError, HashingErrorCode } from './errors';
export type { ValidationIssue } from './errors';
