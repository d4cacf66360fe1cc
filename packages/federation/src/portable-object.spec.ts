import { ORIGIN_CREATED_ANNOTATION, ORIGIN_UID_ANNOTATION } from '@cellfed/api';
import { portableObject } from './portable-object.ts';

const services = { group: '', version: 'v1', resource: 'services' };

describe('portableObject', () => {
  it('drops what the source apiserver owns, keeps the rest, splits off the status, and leaves the input alone', () => {
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'web',
        namespace: 'shop',
        uid: 'u1',
        resourceVersion: '9',
        creationTimestamp: '2026-01-01T00:00:00Z',
        labels: { app: 'web' },
        ownerReferences: [{ uid: 'u0' }],
      },
      spec: { clusterIP: '10.0.0.7', clusterIPs: ['10.0.0.7'], ports: [{ port: 80 }] },
      status: { loadBalancer: {} },
    };
    const before = structuredClone(service);
    const portable = portableObject(service, { resource: services, namespace: 'shop', name: 'web' });
    expect(portable.object).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'web',
        namespace: 'shop',
        labels: { app: 'web' },
        annotations: {
          [ORIGIN_UID_ANNOTATION]: 'u1',
          [ORIGIN_CREATED_ANNOTATION]: '2026-01-01T00:00:00Z',
        },
      },
      spec: { ports: [{ port: 80 }] },
    });
    expect(portable.status).toEqual({ loadBalancer: {} });
    expect(service).toEqual(before);
  });

  it('keeps the uid and creation time clients first knew through copies of copies', () => {
    const copyOfCopy = portableObject(
      {
        metadata: {
          name: 'web',
          namespace: 'shop',
          uid: 'u2',
          creationTimestamp: '2026-03-01T00:00:00Z',
          annotations: { [ORIGIN_UID_ANNOTATION]: 'u1', [ORIGIN_CREATED_ANNOTATION]: '2026-01-01T00:00:00Z' },
        },
      },
      { resource: services, namespace: 'shop', name: 'web' },
    );
    expect(copyOfCopy.object.metadata.annotations).toEqual({
      [ORIGIN_UID_ANNOTATION]: 'u1',
      [ORIGIN_CREATED_ANNOTATION]: '2026-01-01T00:00:00Z',
    });
  });

  it('keeps a headless Service headless', () => {
    const portable = portableObject(
      { metadata: { name: 'db' }, spec: { clusterIP: 'None' } },
      { resource: services, namespace: 'shop', name: 'db' },
    );
    expect(portable.object.spec).toEqual({ clusterIP: 'None' });
  });
});
