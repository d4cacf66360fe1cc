/**
 * @cellfed/api — cellfed's Kubernetes API: the CellSet and CellBackup resources (types, zod schemas,
 * defaults, CRDs) and every `cellfed.io/*` name it puts on objects. Pure: no Kubernetes client, no I/O.
 * The ring and the routing rule the CellSet feeds are @cellfed/hashing's.
 * @packageDocumentation
 */
export {
  CELLSET_API_VERSION,
  CELLSET_KIND,
  CELLSET_RULES,
  DEFAULT_CELLSET_NAME,
  DEFAULT_CELLULAR_RESOURCES,
  DEFAULT_SECRET_KEY,
  DEFAULT_SECRET_NAMESPACE,
  DEFAULT_SHARED_RESOURCES,
  CellSchema,
  CellSetSchema,
  CellSetSpecSchema,
  CellStateSchema,
  GroupVersionResourceSchema,
  SecretRefSchema,
  parseCellSet,
  parseCellSetSpec,
  safeParseCellSet,
} from './cell-set.ts';
export type {
  Cell,
  CellSet,
  CellSetInput,
  CellSetSpec,
  CellSetSpecInput,
  GroupVersionResource,
} from './cell-set.ts';
export { CELL_STATES } from '@cellfed/hashing';
export type { CellState } from '@cellfed/hashing';
export {
  BACKUP_FORMAT_JSON,
  BackedUpObjectSchema,
  CELL_BACKUPS,
  CELL_BACKUP_API_VERSION,
  CELL_BACKUP_KIND,
  CELL_BACKUP_NAMESPACE,
  CellBackupSchema,
  cellBackupCrd,
} from './cell-backup.ts';
export type { CellBackup } from './cell-backup.ts';
export { cellSetCrd } from './crds/cellset-crd.ts';
export { crdManifests, renderCrd } from './crds/crd-manifests.ts';
export type { CustomResourceDefinition } from './crds/crd-types.ts';
export { CELLSET_EXAMPLES, CELL_BACKUP_EXAMPLES } from './crds/crd-examples.ts';
export type { CrdExample } from './crds/crd-examples.ts';
export { CELL_MADE_RESOURCES } from './cell-made-resources.ts';
export * from './names.ts';
export {
  CONTROL_PLANE_SLOT,
  MAX_OWN_VERSION,
  VERSION_SLOT_BITS,
  objectVersion,
  parseObjectVersion,
  versionSlot,
} from './object-versions.ts';
export { ApiErrorCode, CellSetError } from './errors.ts';
export type { ValidationIssue } from './errors.ts';
