import { CELL_STATES } from '@cellfed/hashing';

import { CELLSET_RULES, DEFAULT_CELLULAR_RESOURCES, DEFAULT_SECRET_KEY } from '../cell-set.ts';
import { cellfedCrd, type CustomResourceDefinition } from './crd-types.ts';

const label = (description?: string) => ({
  type: 'string',
  ...(description ? { description } : {}),
  maxLength: CELLSET_RULES.dns1123Label.maxLength,
  pattern: CELLSET_RULES.dns1123Label.pattern,
});

const subdomain = () => ({
  type: 'string',
  maxLength: CELLSET_RULES.dns1123Subdomain.maxLength,
  pattern: CELLSET_RULES.dns1123Subdomain.pattern,
});

/** `group/version/resource`, as CellSet and CellBackup both name resources. */
export const groupVersionResourceSchema = {
  type: 'object',
  required: ['group', 'version', 'resource'],
  properties: {
    group: {
      type: 'string',
      description: 'API group; empty for the core API.',
      maxLength: CELLSET_RULES.dns1123Subdomain.maxLength,
      pattern: `^$|${CELLSET_RULES.dns1123Subdomain.pattern}`,
    },
    version: { type: 'string', pattern: CELLSET_RULES.version.pattern },
    resource: label(),
  },
};

/**
 * The CellSet CRD, built from the same rules as the zod schema in @cellfed/hashing (CELLSET_RULES, the
 * states, the defaults). Cross-field rules zod checks in code are here as list-map keys (unique cell ids,
 * unique resources) and a CEL rule (at least one Normal cell).
 */
export function cellSetCrd(): CustomResourceDefinition {
  return cellfedCrd({
    kind: 'CellSet',
    plural: 'cellsets',
    scope: 'Cluster',
    printerColumns: [{ name: 'Shard-By', type: 'string', jsonPath: '.spec.shardBy' }],
    description: 'The cells of a cellfed federation and how objects are sharded across them.',
    spec: {
      type: 'object',
      required: ['cells'],
      properties: {
        shardBy: {
          type: 'string',
          description:
            'What is hashed, "name" (namespace/name) or "namespace" (a whole namespace in one cell).',
          enum: ['name', 'namespace'],
          default: 'name',
        },
        cellularResources: {
          type: 'array',
          description: 'The resources that live in cells; everything else stays in the router control plane.',
          default: DEFAULT_CELLULAR_RESOURCES.map((gvr) => ({ ...gvr })),
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['group', 'resource'],
          items: groupVersionResourceSchema,
        },
        sharedResources: {
          type: 'array',
          description:
            'Resources of the router control plane mirrored into every cell (RBAC, PriorityClasses, ' +
            'LimitRanges, NetworkPolicies, PodDisruptionBudgets, admission policies and webhooks, …) so the ' +
            'cells apply them to the objects they hold; none may also be cellular. Absent: the defaults ' +
            '(docs/governance.md), less any resource listed in cellularResources.',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['group', 'resource'],
          items: groupVersionResourceSchema,
        },
        cells: {
          type: 'array',
          minItems: 1,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['id'],
          'x-kubernetes-validations': [
            {
              rule: "self.exists(c, c.state == 'Normal')",
              message: CELLSET_RULES.atLeastOneNormal,
            },
          ],
          items: {
            type: 'object',
            required: ['id', 'state', 'kubeconfigSecretRef'],
            // A weight change is a rebalance: it must say where objects are now (previousWeight) or the
            // routers would send requests to cells the objects have not reached. Rules on `oldSelf` run on
            // updates of a cell already listed (the list is a map keyed by id).
            'x-kubernetes-validations': [
              {
                rule: "!has(self.previousWeight) || self.state == 'Normal'",
                message: 'previousWeight: only a Normal cell changes weight',
              },
              {
                rule: '!has(self.previousWeight) || self.previousWeight != self.weight',
                message: 'previousWeight: equals weight; remove it, or set weight to the new value',
              },
              {
                rule:
                  "self.weight == oldSelf.weight || (self.state == 'Normal' && oldSelf.state == 'Normal' && " +
                  '!has(oldSelf.previousWeight) && has(self.previousWeight) && self.previousWeight == oldSelf.weight)',
                message: CELLSET_RULES.weightChange,
              },
              {
                rule:
                  '!has(self.previousWeight) || (has(oldSelf.previousWeight) ? ' +
                  'self.previousWeight == oldSelf.previousWeight : self.previousWeight == oldSelf.weight)',
                message:
                  'previousWeight: set only with a weight change, to the weight before it, and then left alone',
              },
            ],
            properties: {
              id: label("The cell's stable name; it is what the ring hashes, so it never changes."),
              weight: {
                type: 'integer',
                description: "Capacity; the cell's share of keys is proportional to it.",
                minimum: CELLSET_RULES.weight.minimum,
                maximum: CELLSET_RULES.weight.maximum,
                default: CELLSET_RULES.weight.default,
              },
              previousWeight: {
                type: 'integer',
                description:
                  'Set while the weight changes: the weight objects are placed by until the rebalance to weight ' +
                  'has finished; the rebalance controller removes it then.',
                minimum: CELLSET_RULES.weight.minimum,
                maximum: CELLSET_RULES.weight.maximum,
              },
              state: {
                type: 'string',
                description: 'Normal, Joining (being filled), Draining (being emptied) or Down (failed).',
                enum: [...CELL_STATES],
              },
              kubeconfigSecretRef: {
                type: 'object',
                description:
                  "The Secret in the router control plane that holds the cell's kubeconfig. Without a namespace, each " +
                  'cellfed component reads the Secret of that name from its own credentials namespace (an identity ' +
                  'of its own in the cell); with one, that Secret, for every component whose credentials namespace it is.',
                required: ['name'],
                properties: {
                  name: subdomain(),
                  namespace: label(),
                  key: {
                    type: 'string',
                    pattern: CELLSET_RULES.secretKey.pattern,
                    default: DEFAULT_SECRET_KEY,
                  },
                },
              },
            },
          },
        },
      },
    },
    status: {
      type: 'object',
      description: 'Written by the rebalance controller.',
      'x-kubernetes-preserve-unknown-fields': true,
    },
  });
}
