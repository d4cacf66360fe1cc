import { FederationErrorCode } from './errors.ts';
import {
  cellOwnObjectName,
  collectionPath,
  formatObjectKey,
  isCellOwnObject,
  objectPath,
  parseObjectKey,
  type CellularObjectRef,
} from './object-ref.ts';

const configMap = (namespace: string, name: string): CellularObjectRef => ({
  resource: { group: '', version: 'v1', resource: 'configmaps' },
  namespace,
  name,
});

describe('isCellOwnObject', () => {
  it.each([
    ['kube-system', 'kube-apiserver-legacy-service-account-token-tracking'],
    ['kube-system', 'extension-apiserver-authentication'],
    ['kube-public', 'cluster-info'],
    ['kube-node-lease', 'anything'],
    ['shop', 'kube-root-ca.crt'],
  ])('%s/%s belongs to its cell and never moves', (namespace, name) => {
    expect(isCellOwnObject(configMap(namespace, name))).toBe(true);
  });

  it('the apiserver’s own Service is the cell’s; other Services and ConfigMaps are the federation’s', () => {
    const service = (namespace: string, name: string): CellularObjectRef => ({
      resource: { group: '', version: 'v1', resource: 'services' },
      namespace,
      name,
    });
    expect(isCellOwnObject(service('default', 'kubernetes'))).toBe(true);
    expect(isCellOwnObject(service('shop', 'kubernetes'))).toBe(false);
    expect(isCellOwnObject(configMap('default', 'settings'))).toBe(false);
    expect(isCellOwnObject(configMap('shop', 'settings'))).toBe(false);
  });

  it('so are that Service’s Endpoints and EndpointSlice', () => {
    const ref = (group: string, resource: string, namespace: string): CellularObjectRef => ({
      resource: { group, version: 'v1', resource },
      namespace,
      name: 'kubernetes',
    });
    expect(isCellOwnObject(ref('', 'endpoints', 'default'))).toBe(true);
    expect(isCellOwnObject(ref('discovery.k8s.io', 'endpointslices', 'default'))).toBe(true);
    expect(isCellOwnObject(ref('discovery.k8s.io', 'endpointslices', 'shop'))).toBe(false);
    expect(isCellOwnObject(ref('apps', 'deployments', 'default'))).toBe(false);
  });
});

describe('cellOwnObjectName', () => {
  it('names what each apiserver makes for itself outside its system namespaces, where it makes one', () => {
    const configMaps = { group: '', resource: 'configmaps' };
    const services = { group: '', resource: 'services' };
    expect(cellOwnObjectName(configMaps, 'shop')).toBe('kube-root-ca.crt');
    expect(cellOwnObjectName(configMaps)).toBe('kube-root-ca.crt');
    expect(cellOwnObjectName(services, 'default')).toBe('kubernetes');
    expect(cellOwnObjectName(services)).toBe('kubernetes');
    expect(cellOwnObjectName(services, 'shop')).toBeUndefined();
    expect(cellOwnObjectName({ group: 'apps', resource: 'deployments' })).toBeUndefined();
  });
});

describe('object keys', () => {
  const deployments = { group: 'apps', version: 'v1', resource: 'deployments' };
  const resources = new Map([['deployments.apps', deployments]]);

  it('name the object, not a cell, and read back', () => {
    const ref = { resource: deployments, namespace: 'shop', name: 'web' };
    expect(formatObjectKey(ref)).toBe('deployments.apps/shop/web');
    expect(parseObjectKey('deployments.apps/shop/web', resources)).toEqual(ref);
  });

  it('are nothing to do for a resource no longer cellular, and an error when malformed', () => {
    expect(parseObjectKey('configmaps/shop/web', resources)).toBeUndefined();
    expect(() => parseObjectKey('deployments.apps/web', resources)).toThrow(
      expect.objectContaining({ code: FederationErrorCode.InvalidKey }),
    );
  });
});

describe('objectPath and collectionPath', () => {
  it('name the object and where it is created, in its namespace or the cluster', () => {
    expect(objectPath(configMap('shop', 'web'))).toBe('/api/v1/namespaces/shop/configmaps/web');
    expect(collectionPath(configMap('shop', 'web'))).toBe('/api/v1/namespaces/shop/configmaps');
    const node: CellularObjectRef = {
      resource: { group: '', version: 'v1', resource: 'nodes' },
      namespace: '',
      name: 'n1',
    };
    expect(objectPath(node)).toBe('/api/v1/nodes/n1');
    expect(collectionPath(node)).toBe('/api/v1/nodes');
  });
});
