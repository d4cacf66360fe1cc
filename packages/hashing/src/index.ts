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
export type { RouteCase, RouteDecision, RoutingCell, RoutingCells } from './routing-table';
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
export { CELL_STATES } from './cell-states';
export type { CellState } from './cell-states';
export { HashingError, HashingErrorCode } from './errors';
