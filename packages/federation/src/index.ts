/**
 * @cellfed/federation — the protocol cellfed's router and controllers share, each concept defined once: the
 * compiled CellSet generation and its live cells, object keys and the key codec, the marks cellfed keeps on
 * objects (held owners, identity, portable copies, pod references), the write fence, backup names, the wire
 * constants and the resource descriptors and paths. Pure: no Kubernetes client, no I/O; it depends on zod,
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
export {
  CLAIMS,
  CONFIG_MAPS,
  CRDS,
  LEASES,
  NAMESPACES,
  RESOURCE_QUOTAS,
  SECRETS,
  SERVICES,
} from './resources.ts';
export {
  claimedService,
  hasNodePorts,
  holdsClaimedPorts,
  isNodePortClaim,
  nodePortClaim,
  nodePortClaimRef,
  nodePortsOf,
  withClaimedPorts,
} from './node-port-claims.ts';
export type { Service, ServiceRef, ServiceSpec } from './node-port-claims.ts';
export type { KubeList, KubeObject, ObjectMeta } from './kube-object.ts';
export { compileCellSet, type CellSetGeneration } from './cell-set-generation.ts';
export { resourceId, resourceName, resourcePath, type ResourceRef } from './resource-path.ts';
export { FederationError, FederationErrorCode } from './errors.ts';
export { keyCodec } from './key-codec.ts';
export type { Key, KeyCodec } from './key-codec.ts';
export {
  CELL_SYSTEM_NAMESPACES,
  OBJECT_KEYS,
  collectionPath,
  formatObjectKey,
  objectKeyOf,
  objectPath,
  objectRefOf,
  isCellOwnObject,
  cellOwnObjectName,
  parseObjectKey,
  routeOf,
} from './object-ref.ts';
export type { ObjectKey, CellularObjectRef } from './object-ref.ts';
export {
  HeldOwnersError,
  formatHeldOwners,
  heldOwners,
  heldOwnersOrNone,
  madeByItsCell,
  ownerReferencesOf,
  shownOwners,
  splitOwners,
} from './held-owners.ts';
export type { OwnerReference } from './held-owners.ts';
export { orphanedOwnerEventsPath } from './orphaned-owners.ts';
export { isKnownAs } from './object-identity.ts';
export { portableObject, without } from './portable-object.ts';
export { NOT_FOLLOWER_SELECTOR, hasPodTemplate, podReferences } from './pod-references.ts';
export type { PodReferences } from './pod-references.ts';
export type { PortableObject } from './portable-object.ts';
export {
  backedUpObject,
  cellBackupName,
  cellBackupOf,
  holdsKey,
  legacyCellBackupName,
  cellBackupPath,
  isCurrentBackupForm,
} from './cell-backups.ts';
export { heldSpecPatch } from './held-spec.ts';
export { FENCE_POLICY_NAME, fencePolicyObjects, fenceProbe, isFenceRefusal } from './fence-policy.ts';
export { MARKS_POLICY_NAME, exemptComponentUsers, marksPolicyObjects } from './marks-policy.ts';
export { celUserIsOneOf } from './cell-policy.ts';
export { UNIT, formatResourceList, parseQuantity, parseResourceList, sameResourceList } from './quantity.ts';
export type { ResourceList } from './quantity.ts';
export { countedResource, countsObjects } from './quota-names.ts';
export type { CountedResource } from './quota-names.ts';
export { drawFrom, settleShares } from './quota-shares.ts';
export type { Amounts, ShareHolder } from './quota-shares.ts';
export { routerLeaseName, routersBehind } from './router-presence.ts';
export type { RouterLease, RouterPresence } from './router-presence.ts';
export {
  QUOTA_COPY_SELECTOR,
  changedAtOf,
  drawnAtOf,
  enforcedLimits,
  shareOf,
  withShare,
} from './quota-copies.ts';
export type { ResourceQuota, ShareChange } from './quota-copies.ts';
export { quotaRefusalOf } from './quota-refusal.ts';
export type { QuotaRefusal } from './quota-refusal.ts';
export { annotationsBumpGeneration, showsOriginGeneration } from './origin-generation.ts';
