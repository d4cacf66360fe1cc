import {
  BACKUP_CELL_LABEL,
  CellBackupSchema,
  PRIMARY_CELL_LABEL,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
} from '@cellfed/api';

import { createHash } from 'node:crypto';

import {
  backedUpObject,
  cellBackupName,
  cellBackupOf,
  holdsKey,
  isCurrentBackupForm,
  legacyCellBackupName,
} from './cell-backups.ts';

const deployments = { group: 'apps', version: 'v1', resource: 'deployments' };

describe('CellBackup of an object', () => {
  it('is a valid CellBackup naming both cells, the object and the version it copies, holding its JSON', () => {
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
    expect(backup.spec.source).toEqual({
      ...ref.resource,
      namespace: 'shop',
      name: 'web',
      kind: 'Deployment',
      uid: 'u1',
    });
    expect(backup.spec.object).toBeUndefined();
    expect(JSON.parse(backup.spec.data!)).toEqual(object);
    expect(backedUpObject(backup)).toEqual(object);
    expect(isCurrentBackupForm(backup.metadata)).toBe(true);
  });

  it('is read from the earlier form too, which is not current; an unreadable one holds nothing', () => {
    const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } };
    const earlier = { metadata: { annotations: {} }, spec: { object } };
    expect(backedUpObject(earlier)).toEqual(object);
    expect(isCurrentBackupForm(earlier.metadata)).toBe(false);
    expect(backedUpObject({ spec: { data: '{"kind": "ConfigMap", trunc' } })).toBeUndefined();
    expect(backedUpObject({ spec: { data: '"a string"' } })).toBeUndefined();
    expect(
      backedUpObject({ spec: { data: '{"apiVersion":"v1","kind":"ConfigMap","metadata":null}' } }),
    ).toBeUndefined();
    expect(
      backedUpObject({ spec: { data: '{"apiVersion":"v1","kind":"ConfigMap","metadata":[]}' } }),
    ).toBeUndefined();
    expect(backedUpObject({ spec: { data: '{"kind":"ConfigMap","metadata":{}}' } })).toBeUndefined();
    expect(backedUpObject({ spec: {} })).toBeUndefined();
    expect(backedUpObject({})).toBeUndefined();
  });

  it('has a short name that depends on the resource, namespace and name alone', () => {
    const long = 'x'.repeat(253);
    const name = cellBackupName({ resource: deployments, namespace: 'n'.repeat(63), name: long });
    expect(name).toMatch(/^deployments-[0-9a-f]{40}$/);
    const web = (namespace: string) => cellBackupName({ resource: deployments, namespace, name: 'web' });
    expect(web('shop')).toBe(web('shop'));
    expect(web('shop')).not.toBe(web('shop2'));
    expect(
      cellBackupName({ resource: { ...deployments, group: 'x' }, namespace: 'shop', name: 'web' }),
    ).not.toBe(web('shop'));
  });

  it('names by a cryptographic hash of the key (a tenant cannot pick a key whose backup takes another’s name)', () => {
    const ref = { resource: deployments, namespace: 'shop', name: 'web' };
    // The SHA-256 of its key, as any implementation computes it.
    expect(cellBackupName(ref)).toBe(
      `deployments-${createHash('sha256').update('deployments.apps/shop/web').digest('hex').slice(0, 40)}`,
    );
    expect(legacyCellBackupName(ref)).toMatch(/^deployments-[0-9a-f]{16}$/);
    expect(legacyCellBackupName(ref)).not.toBe(cellBackupName(ref));
  });

  it('tells a backup that holds the key from one at its name that holds another', () => {
    const ref = { resource: deployments, namespace: 'shop', name: 'web' };
    const object = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
    };
    const own = cellBackupOf(object, ref, { primaryCell: 'a', backupCell: 'b' });
    expect(holdsKey(own.metadata, ref)).toBe(true);
    const other = cellBackupOf(
      { ...object, metadata: { name: 'web2', namespace: 'shop' } },
      { ...ref, name: 'web2' },
      { primaryCell: 'a', backupCell: 'b' },
    );
    expect(holdsKey(other.metadata, ref)).toBe(false);
    expect(holdsKey({}, ref)).toBe(false);
  });
});
