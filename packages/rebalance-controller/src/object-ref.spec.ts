import { isCellOwnObject, type ObjectRef } from './object-ref.ts';

const configMap = (namespace: string, name: string): ObjectRef => ({
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
    const service = (namespace: string, name: string): ObjectRef => ({
      resource: { group: '', version: 'v1', resource: 'services' },
      namespace,
      name,
    });
    expect(isCellOwnObject(service('default', 'kubernetes'))).toBe(true);
    expect(isCellOwnObject(service('shop', 'kubernetes'))).toBe(false);
    expect(isCellOwnObject(configMap('default', 'settings'))).toBe(false);
    expect(isCellOwnObject(configMap('shop', 'settings'))).toBe(false);
  });
});
