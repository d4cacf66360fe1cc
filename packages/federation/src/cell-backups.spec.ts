import {
  BACKUP_CELL_LABEL,
  CellBackupSchema,
  PRIMARY_CELL_LABEL,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
} from '@cellfed/api';

import { cellBackupName, cellBackupOf } from './cell-backups.ts';

const deployments = { group: 'apps', version: 'v1', resource: 'deployments' };

describe('CellBackup of an object', () => {
  it('is a valid CellBackup naming both cells and the version it copies', () => {
    const ref = { resource: deployments, namespace: 'shop', name: 'web' };
    const object = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', resourceVersion: '42', uid: 'u1' },
      spec: { replicas: 2 },
    };
    const backup = cellBackupOf(object, ref, { primaryCell: 'cell-1', backupCell: 'cell-2' });
    expect(CellBackupSchema.safeParse(backup).success).toBe(true);
    expect(backup.metadata.labels).toEqual({ [BACKUP_CELL_LABEL]: 'cell-2', [PRIMARY_CELL_LABEL]: 'cell-1' });
    expect(backup.metadata.annotations).toMatchObject({ [SOURCE_RESOURCE_VERSION_ANNOTATION]: '42' });
    expect(backup.spec.object).toEqual(object);
    expect(backup.spec.object).not.toBe(object);
  });

  it('has a short name that depends on the resource, namespace and name alone', () => {
    const long = 'x'.repeat(253);
    const name = cellBackupName({ resource: deployments, namespace: 'n'.repeat(63), name: long });
    expect(name).toMatch(/^deployments-[0-9a-f]{16}$/);
    const web = (namespace: string) => cellBackupName({ resource: deployments, namespace, name: 'web' });
    expect(web('shop')).toBe(web('shop'));
    expect(web('shop')).not.toBe(web('shop2'));
    expect(
      cellBackupName({ resource: { ...deployments, group: 'x' }, namespace: 'shop', name: 'web' }),
    ).not.toBe(web('shop'));
  });
});
