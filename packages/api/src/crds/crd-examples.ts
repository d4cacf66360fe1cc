import { CELL_BACKUP_API_VERSION } from '../cell-backup.ts';
import { CELLSET_API_VERSION } from '../cell-set.ts';

/** An object both the CRD (in a real apiserver) and the zod schema must judge the same way. */
export interface CrdExample {
  name: string;
  valid: boolean;
  object: Record<string, unknown>;
}

const ref = (name: string) => ({ name });
const cellSet = (name: string, spec: unknown) => ({
  apiVersion: CELLSET_API_VERSION,
  kind: 'CellSet',
  metadata: { name },
  spec,
});
const cell = (id: string, state = 'Normal', extra: Record<string, unknown> = {}) => ({
  id,
  state,
  kubeconfigSecretRef: ref(`${id}-kubeconfig`),
  ...extra,
});

/** CellSets: the accepted shapes and one example of each rule the schema enforces. */
export const CELLSET_EXAMPLES: CrdExample[] = [
  { name: 'minimal', valid: true, object: cellSet('ex-minimal', { cells: [cell('a')] }) },
  {
    name: 'every field',
    valid: true,
    object: cellSet('ex-full', {
      shardBy: 'namespace',
      cellularResources: [
        { group: 'apps', version: 'v1', resource: 'deployments' },
        { group: '', version: 'v1', resource: 'configmaps' },
        { group: 'example.com', version: 'v2beta1', resource: 'widgets' },
      ],
      cells: [
        cell('a', 'Normal', { weight: 3 }),
        cell('b', 'Joining', {
          kubeconfigSecretRef: { name: 'b.creds', namespace: 'other', key: 'config.yaml' },
        }),
        cell('c', 'Draining'),
        cell('d', 'Down', { weight: 1000 }),
      ],
    }),
  },
  { name: 'no cells', valid: false, object: cellSet('ex-empty', { cells: [] }) },
  { name: 'no Normal cell', valid: false, object: cellSet('ex-nonormal', { cells: [cell('a', 'Joining')] }) },
  {
    name: 'duplicate cell id',
    valid: false,
    object: cellSet('ex-dup', { cells: [cell('a'), cell('a', 'Joining')] }),
  },
  { name: 'unknown state', valid: false, object: cellSet('ex-state', { cells: [cell('a', 'Sleeping')] }) },
  {
    name: 'weight 0',
    valid: false,
    object: cellSet('ex-w0', { cells: [cell('a', 'Normal', { weight: 0 })] }),
  },
  {
    name: 'weight 1001',
    valid: false,
    object: cellSet('ex-w1001', { cells: [cell('a', 'Normal', { weight: 1001 })] }),
  },
  {
    name: 'weight 1.5',
    valid: false,
    object: cellSet('ex-wfrac', { cells: [cell('a', 'Normal', { weight: 1.5 })] }),
  },
  { name: 'uppercase cell id', valid: false, object: cellSet('ex-upper', { cells: [cell('Cell-A')] }) },
  {
    name: 'cell id of 64 characters',
    valid: false,
    object: cellSet('ex-long', { cells: [cell('a'.repeat(64))] }),
  },
  {
    name: 'cell id of 63 characters',
    valid: true,
    object: cellSet('ex-63', { cells: [cell('a'.repeat(63))] }),
  },
  {
    name: 'no kubeconfigSecretRef',
    valid: false,
    object: cellSet('ex-noref', { cells: [{ id: 'a', state: 'Normal' }] }),
  },
  {
    name: 'bad Secret key',
    valid: false,
    object: cellSet('ex-key', {
      cells: [cell('a', 'Normal', { kubeconfigSecretRef: { name: 'x', key: 'a/b' } })],
    }),
  },
  {
    name: 'unknown shardBy',
    valid: false,
    object: cellSet('ex-shard', { shardBy: 'label', cells: [cell('a')] }),
  },
  {
    name: 'bad version',
    valid: false,
    object: cellSet('ex-version', {
      cellularResources: [{ group: 'apps', version: '1', resource: 'deployments' }],
      cells: [cell('a')],
    }),
  },
  {
    name: 'uppercase group',
    valid: false,
    object: cellSet('ex-group', {
      cellularResources: [{ group: 'Apps', version: 'v1', resource: 'deployments' }],
      cells: [cell('a')],
    }),
  },
  {
    name: 'resource listed twice',
    valid: false,
    object: cellSet('ex-gvr-dup', {
      cellularResources: [
        { group: 'apps', version: 'v1', resource: 'deployments' },
        { group: 'apps', version: 'v2', resource: 'deployments' },
      ],
      cells: [cell('a')],
    }),
  },
  {
    name: 'no spec',
    valid: false,
    object: { apiVersion: CELLSET_API_VERSION, kind: 'CellSet', metadata: { name: 'ex-nospec' } },
  },
];

const backup = (name: string, spec: unknown) => ({
  apiVersion: CELL_BACKUP_API_VERSION,
  kind: 'CellBackup',
  metadata: {
    name,
    namespace: 'default',
    labels: { 'cellfed.io/backup-cell-id': 'b', 'cellfed.io/primary-cell-id': 'a' },
  },
  spec,
});
const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team' },
  spec: { replicas: 2 },
};
const source = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'team', name: 'web' };

/** CellBackups. */
export const CELL_BACKUP_EXAMPLES: CrdExample[] = [
  {
    name: 'a Deployment',
    valid: true,
    object: backup('ex-deploy', {
      source: { ...source, kind: 'Deployment', uid: 'u-1' },
      data: JSON.stringify(deployment),
    }),
  },
  {
    name: 'a Deployment in the earlier form (spec.object)',
    valid: true,
    object: backup('ex-deploy-v0', { source, object: deployment }),
  },
  {
    name: 'a cluster-scoped object',
    valid: true,
    object: backup('ex-cluster', {
      source: { group: 'example.com', version: 'v1', resource: 'widgets', name: 'w' },
      data: JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }),
    }),
  },
  { name: 'no object', valid: false, object: backup('ex-noobj', { source }) },
  { name: 'no source', valid: false, object: backup('ex-nosrc', { data: JSON.stringify(deployment) }) },
  { name: 'data not a string', valid: false, object: backup('ex-datatype', { source, data: deployment }) },
  {
    name: 'object without kind',
    valid: false,
    object: backup('ex-nokind', { source, object: { apiVersion: 'apps/v1', metadata: { name: 'web' } } }),
  },
  {
    name: 'bad source name',
    valid: false,
    object: backup('ex-srcname', { source: { ...source, name: 'Web!' }, object: deployment }),
  },
  {
    name: 'bad source namespace',
    valid: false,
    object: backup('ex-srcns', { source: { ...source, namespace: 'Team_A' }, object: deployment }),
  },
];
