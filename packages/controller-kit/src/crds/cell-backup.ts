import { CELLSET_RULES, hash64Hex } from '@cellfed/hashing';
import { z } from 'zod';

import type { KubeObject } from '../kube/kube-object.ts';
import { formatObjectKey, type ObjectRef } from '../objects/object-ref.ts';

import { groupVersionResourceSchema } from './cellset-crd.ts';
import { cellfedCrd, type CustomResourceDefinition } from './crd-types.ts';

export const CELL_BACKUP_API_VERSION = 'cells.cellfed.io/v1alpha1';
export const CELL_BACKUP_KIND = 'CellBackup';
/** On a backup: the cell that holds it. */
export const BACKUP_CELL_LABEL = 'cellfed.io/backup-cell-id';
/** On a backup: the cell that holds the real object. */
export const PRIMARY_CELL_LABEL = 'cellfed.io/primary-cell-id';
/** On a backup: the key of the object it copies (`deployments.apps/namespace/name`). */
export const BACKUP_SOURCE_ANNOTATION = 'cellfed.io/source';
/** On a backup: the resourceVersion of the primary it copies, in the primary's cell. */
export const SOURCE_RESOURCE_VERSION_ANNOTATION = 'cellfed.io/source-resource-version';
/** The namespace every cell keeps its CellBackups in: reserved, nothing else runs there. */
export const CELL_BACKUP_NAMESPACE = 'cellfed-backups';
/** The CellBackup resource, for clients and informers. */
export const CELL_BACKUPS = {
  group: 'cells.cellfed.io',
  version: 'v1alpha1',
  resource: 'cellbackups',
} as const;

/**
 * The name of an object's CellBackup: `<resource>-<64-bit hash of its key>`, always a valid name however
 * long the object's namespace and name, and computable from the request alone so the router can read it.
 */
export function cellBackupName(ref: ObjectRef): string {
  return `${ref.resource.resource}-${hash64Hex(formatObjectKey(ref))}`;
}

/** The CellBackup of `object` (read in `primaryCell`) to keep in `backupCell`. */
export function cellBackupOf(
  object: Readonly<KubeObject>,
  ref: ObjectRef,
  cells: { primaryCell: string; backupCell: string },
): CellBackup {
  const { resourceVersion } = object.metadata;
  return {
    apiVersion: CELL_BACKUP_API_VERSION,
    kind: CELL_BACKUP_KIND,
    metadata: {
      name: cellBackupName(ref),
      namespace: CELL_BACKUP_NAMESPACE,
      labels: { [BACKUP_CELL_LABEL]: cells.backupCell, [PRIMARY_CELL_LABEL]: cells.primaryCell },
      annotations: {
        [BACKUP_SOURCE_ANNOTATION]: formatObjectKey(ref),
        [SOURCE_RESOURCE_VERSION_ANNOTATION]: resourceVersion ?? '',
      },
    },
    spec: {
      source: { ...ref.resource, namespace: ref.namespace, name: ref.name },
      object: structuredClone(object) as CellBackup['spec']['object'],
    },
  };
}

const matches = (what: string, rule: { pattern: string; maxLength?: number }) =>
  z
    .string({ error: `${what} must be a string` })
    .max(rule.maxLength ?? Number.MAX_SAFE_INTEGER, {
      error: `${what} is longer than ${rule.maxLength} characters`,
    })
    .regex(new RegExp(rule.pattern), { error: `${what} must match ${rule.pattern}` });

/**
 * An inert copy of a cellular object, kept in the object's backup cell. Nothing reconciles it: the object
 * sits in `spec.object` as data. The labels name the backup and primary cells.
 */
export const CellBackupSchema = z.object({
  apiVersion: z.literal(CELL_BACKUP_API_VERSION),
  kind: z.literal(CELL_BACKUP_KIND),
  metadata: z.looseObject({
    name: matches('metadata.name', CELLSET_RULES.dns1123Subdomain),
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
  spec: z.object({
    source: z.object({
      group: z.union([z.literal(''), matches('group', CELLSET_RULES.dns1123Subdomain)]),
      version: matches('version', CELLSET_RULES.version),
      resource: matches('resource', CELLSET_RULES.dns1123Label),
      /** Empty for cluster-scoped objects. */
      namespace: z.union([z.literal(''), matches('namespace', CELLSET_RULES.dns1123Label)]).default(''),
      name: matches('name', CELLSET_RULES.dns1123Subdomain),
    }),
    object: z.looseObject({
      apiVersion: z.string().min(1),
      kind: z.string().min(1),
      metadata: z.looseObject({}),
    }),
  }),
  status: z.unknown().optional(),
});

export type CellBackup = z.output<typeof CellBackupSchema>;

/** The CellBackup CRD, from the same rules as {@link CellBackupSchema}. */
export function cellBackupCrd(): CustomResourceDefinition {
  return cellfedCrd({
    kind: CELL_BACKUP_KIND,
    plural: 'cellbackups',
    scope: 'Namespaced',
    printerColumns: [
      { name: 'Kind', type: 'string', jsonPath: '.spec.object.kind' },
      { name: 'Source', type: 'string', jsonPath: '.spec.source.name' },
      {
        name: 'Primary',
        type: 'string',
        jsonPath: `.metadata.labels.${PRIMARY_CELL_LABEL.replace(/[./]/g, '\\$&')}`,
      },
    ],
    description:
      'An inert copy of a cellular object in its backup cell; promoted when its primary cell fails.',
    spec: {
      type: 'object',
      required: ['source', 'object'],
      properties: {
        source: {
          type: 'object',
          description: 'Which object this is a copy of.',
          required: ['group', 'version', 'resource', 'name'],
          properties: {
            ...groupVersionResourceSchema.properties,
            namespace: {
              type: 'string',
              description: 'Empty for cluster-scoped objects.',
              maxLength: CELLSET_RULES.dns1123Label.maxLength,
              pattern: `^$|${CELLSET_RULES.dns1123Label.pattern}`,
              default: '',
            },
            name: {
              type: 'string',
              maxLength: CELLSET_RULES.dns1123Subdomain.maxLength,
              pattern: CELLSET_RULES.dns1123Subdomain.pattern,
            },
          },
        },
        object: {
          type: 'object',
          description: 'The object as it was in its primary cell; stored, never reconciled.',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
    },
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  });
}
