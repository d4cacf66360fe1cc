/**
 * @cellfed/federation — the protocol cellfed's router and controllers share, each concept defined once: the
 * wire constants and the resource descriptors and paths. Pure: no Kubernetes client, no I/O; it depends on
 * @cellfed/api and @cellfed/hashing only.
 * @packageDocumentation
 */
export {
  APPLY_PATCH,
  COMPOSITE_VERSION_PREFIX,
  JSON_PATCH,
  MERGE_PATCH,
  METADATA,
  METADATA_LIST,
  PROTOBUF,
  PROTOBUF_WATCH_STREAM,
  STRATEGIC_MERGE_PATCH,
} from './wire.ts';
export { CLAIMS, CONFIG_MAPS, CRDS, LEASES, NAMESPACES, RESOURCE_QUOTAS, SECRETS } from './resources.ts';
export { liveCells } from './cells.ts';
export type { KubeList, KubeObject, ObjectMeta } from './kube-object.ts';
export { compileCellSet, type CellSetGeneration } from './cell-set-generation.ts';
export { resourceId, resourceName, resourcePath, type ResourceRef } from './resource-path.ts';
