import { z } from 'zod';

import { CELLSET_RULES } from './cell-set.ts';
import { groupVersionResourceSchema } from './crds/cellset-crd.ts';
import { cellfedCrd, type CustomResourceDefinition } from './crds/crd-types.ts';
import { PRIMARY_CELL_LABEL } from './names.ts';

export const CELL_BACKUP_API_VERSION = 'cells.cellfed.io/v1alpha1';
export const CELL_BACKUP_KIND = 'CellBackup';
/** The namespace every cell keeps its CellBackups in: reserved, nothing else runs there. */
export const CELL_BACKUP_NAMESPACE = 'cellfed-backups';
/** The CellBackup resource, for clients and informers. */
export const CELL_BACKUPS = {
  group: 'cells.cellfed.io',
  version: 'v1alpha1',
  resource: 'cellbackups',
} as const;

const matches = (what: string, rule: { pattern: string; maxLength?: number }) =>
  z
    .string({ error: `${what} must be a string` })
    .max(rule.maxLength ?? Number.MAX_SAFE_INTEGER, {
      error: `${what} is longer than ${rule.maxLength} characters`,
    })
    .regex(new RegExp(rule.pattern), { error: `${what} must match ${rule.pattern}` });

/** The JSON of an object kept in `spec.data` (the form BACKUP_FORMAT_ANNOTATION names). */
export const BACKUP_FORMAT_JSON = 'json';

/** The object a CellBackup holds (in `spec.data` as JSON, or as `spec.object` in the earlier form). */
export const BackedUpObjectSchema = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.looseObject({}),
});

/**
 * An inert copy of a cellular object, kept in the object's backup cell. Nothing reconciles it: the object
 * sits in `spec.data` as its JSON, one string the apiserver stores without decoding, pruning or validating
 * the object inside (a backup is written on every change of its object). Backups written before that form
 * hold it in `spec.object` as a subtree; they are read as they are and written anew in the new form. The
 * labels name the backup and primary cells; `spec.source` names the object (and its uid and kind), so
 * `kubectl get cellbackup -o yaml` tells what it is without decoding `spec.data`.
 */
export const CellBackupSchema = z.object({
  apiVersion: z.literal(CELL_BACKUP_API_VERSION),
  kind: z.literal(CELL_BACKUP_KIND),
  metadata: z.looseObject({
    name: matches('metadata.name', CELLSET_RULES.dns1123Subdomain),
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
  spec: z
    .object({
      source: z.object({
        group: z.union([z.literal(''), matches('group', CELLSET_RULES.dns1123Subdomain)]),
        version: matches('version', CELLSET_RULES.version),
        resource: matches('resource', CELLSET_RULES.dns1123Label),
        /** Empty for cluster-scoped objects. */
        namespace: z.union([z.literal(''), matches('namespace', CELLSET_RULES.dns1123Label)]).default(''),
        name: matches('name', CELLSET_RULES.dns1123Subdomain),
        kind: z.string().min(1).optional(),
        uid: z.string().optional(),
      }),
      /** The object as JSON. */
      data: z.string().min(2).optional(),
      /** The object as a subtree: the form before `data`, read until the backup is written again. */
      object: BackedUpObjectSchema.optional(),
    })
    .refine((spec) => spec.data !== undefined || spec.object !== undefined, {
      error: 'spec.data (or, in the earlier form, spec.object) must hold the object',
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
      { name: 'Kind', type: 'string', jsonPath: '.spec.source.kind' },
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
      required: ['source'],
      anyOf: [{ required: ['data'] }, { required: ['object'] }],
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
            kind: { type: 'string', description: 'The kind of the object.' },
            uid: { type: 'string', description: 'The uid the object had in its primary cell.' },
          },
        },
        data: {
          type: 'string',
          description:
            'The object as it was in its primary cell, as JSON: stored, never decoded by the apiserver nor reconciled.',
        },
        object: {
          type: 'object',
          description:
            'The object as a subtree: the form backups had before spec.data, read until each is written again.',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
    },
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  });
}
