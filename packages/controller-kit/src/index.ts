/**
 * @cellfed/controller-kit — the runtime of cellfed's controllers, after controller-runtime, client-go's
 * workqueue and multicluster-runtime: cells engaged at run time, informers that never silently stop, a
 * two-lane work queue, a reconciler runner, Lease leader election, metrics and health.
 * @packageDocumentation
 */
export { realClock, sleep, untilAborted } from './clock.ts';
export type { Clock, Timer } from './clock.ts';
export { ControllerKitError, ControllerKitErrorCode, errorMessage } from './errors.ts';
export { CELL_KEYS, CONTROL_PLANE, formatKey, parseKey } from './object-key.ts';
export type { CellKey } from './object-key.ts';

export type { Lane } from './queue/lane.ts';
export { TokenBucket } from './queue/token-bucket.ts';
export { Fifo } from './queue/fifo.ts';

export { Controller } from './runner/controller.ts';
export type { ControllerOptions } from './runner/controller.ts';
export type { Reconciler, ReconcileRequest, ReconcileResult } from './runner/reconciler.ts';

export { EventRecorder } from './kube/event-recorder.ts';
export type { EventSubject } from './kube/event-recorder.ts';
export { KubeClient } from './kube/kube-client.ts';
export { ApiError, isAlreadyExists, isConflict, isGone, isNotFound } from './kube/api-error.ts';
export { readIfExists } from './kube/read-if-exists.ts';
export { selfUserName } from './kube/self-user-name.ts';
export { watchEvents } from './kube/watch-lines.ts';
export type { WatchEvent } from './kube/watch-lines.ts';

export { Informer } from './informer/informer.ts';
export type { InformerEvent } from './informer/informer.ts';
export { resourceListWatch } from './informer/list-watch.ts';
export type { ListWatch } from './informer/list-watch.ts';

export { CellPool } from './cells/cell-pool.ts';
export { CellSetReader } from './cells/cell-set-reader.ts';
export type { CellSetReading } from './cells/cell-set-reader.ts';
export { CellObjects } from './objects/cell-objects.ts';
export type { CopiesView } from './objects/cell-objects.ts';
export { ControlPlaneNamespaces } from './objects/control-plane-namespaces.ts';
export { commitCopy } from './objects/commit-copy.ts';
export type { CellAware, EngagedCell } from './cells/cell-pool.ts';
export type { CellHealth } from './cells/health-hysteresis.ts';

export { LEADER_ELECTION_DEFAULTS } from './leader/leader-elector.ts';

export { RouterLeasePublisher } from './router-presence/router-lease.ts';

export { Manager } from './process/manager.ts';
export { ManagerConfigSchema } from './process/manager-config.ts';
export {
  CONTROLLER_FLAGS,
  cellSetFlag,
  cellUserFlag,
  controllerUsage,
  issuesLine,
  kubeconfigFlag,
  processFlagRows,
  processSettings,
  readControllerConfig,
  secretNamespaceFlag,
  credentialsNamespaceFlag,
  type ControllerConfig,
} from './process/controller-flags.ts';
export {
  boolFlag,
  durationFlag,
  flagGroup,
  intFlag,
  optionalDurationFlag,
  positiveNumberFlag,
  textFlag,
  type FlagGroup,
  type FlagRow,
  type FlagSettings,
} from './process/flag-rows.ts';
export { flagRows, readFlags, readmeFlagRows, usageOf, wantsHelp } from './process/flags.ts';
export type { Flag } from './process/flags.ts';
export { formatDuration } from './process/duration.ts';
export { runControllerProcess } from './process/controller-main.ts';
export { createLogger } from './log.ts';

export { NOOP_TRACER, TracingConfigSchema, createTracing } from './tracing/tracing.ts';
export { parentContextOf, traceHeadersOf } from './tracing/trace-headers.ts';

export { enforce, writeShare } from './quota/quota-copies.ts';
export {
  QUOTA_DRAW_ATTEMPTS,
  QUOTA_DRAW_SETTLE_MS,
  QuotaDraw,
  quotaRefusalIn,
  writeDrawingQuota,
} from './quota/quota-draw.ts';
