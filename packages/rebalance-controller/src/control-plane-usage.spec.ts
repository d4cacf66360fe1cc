import { ApiError, parseQuantity, type KubeObject } from '@cellfed/controller-kit';
import { FakeCell } from '@cellfed/controller-kit/testing';

import { ControlPlaneUsage } from './control-plane-usage.ts';

const NS = '/api/v1/namespaces/shop';
const q = parseQuantity;

function claim(name: string, storage: string, storageClassName?: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'shop' },
    spec: { ...(storageClassName ? { storageClassName } : {}), resources: { requests: { storage } } },
  } as KubeObject;
}

describe('ControlPlaneUsage', () => {
  const signal = new AbortController().signal;

  it('counts objects, and sums claims’ storage in all and per storage class, as the quota evaluators do', async () => {
    const controlPlane = new FakeCell('control-plane');
    for (const name of ['a', 'b', 'c'])
      controlPlane.put(`${NS}/secrets/${name}`, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace: 'shop' },
      });
    controlPlane.put(`/api/v1/namespaces/other/secrets/x`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'x', namespace: 'other' },
    });
    controlPlane.put(`${NS}/persistentvolumeclaims/data`, claim('data', '10Gi', 'gold'));
    controlPlane.put(`${NS}/persistentvolumeclaims/logs`, claim('logs', '512Mi'));
    const { usage, uncounted } = await new ControlPlaneUsage(controlPlane as never).usage(
      'shop',
      [
        'secrets',
        'count/secrets',
        'persistentvolumeclaims',
        'requests.storage',
        'gold.storageclass.storage.k8s.io/requests.storage',
        'gold.storageclass.storage.k8s.io/persistentvolumeclaims',
      ],
      signal,
    );
    expect(Object.fromEntries(usage)).toEqual({
      secrets: q('3'),
      'count/secrets': q('3'),
      persistentvolumeclaims: q('2'),
      'requests.storage': q('10Gi') + q('512Mi'),
      'gold.storageclass.storage.k8s.io/requests.storage': q('10Gi'),
      'gold.storageclass.storage.k8s.io/persistentvolumeclaims': q('1'),
    });
    expect(uncounted).toEqual([]);
  });

  it('counts a Service’s node ports and load balancers', async () => {
    const controlPlane = new FakeCell('control-plane');
    const service = (name: string, spec: Record<string, unknown>) =>
      controlPlane.put(`${NS}/services/${name}`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: 'shop' },
        spec,
      } as KubeObject);
    service('web', { type: 'NodePort', ports: [{ port: 80 }, { port: 443 }] });
    service('lb', { type: 'LoadBalancer', ports: [{ port: 80 }] });
    service('lb-no-ports', {
      type: 'LoadBalancer',
      allocateLoadBalancerNodePorts: false,
      ports: [{ port: 80 }],
    });
    service('inside', { type: 'ClusterIP', ports: [{ port: 80 }] });
    const { usage } = await new ControlPlaneUsage(controlPlane as never).usage(
      'shop',
      ['services', 'services.nodeports', 'services.loadbalancers'],
      signal,
    );
    expect(Object.fromEntries(usage)).toEqual({
      services: q('4'),
      'services.nodeports': q('3'),
      'services.loadbalancers': q('2'),
    });
  });

  it('leaves a scoped quota’s names and Pods’ compute resources uncounted rather than count them wrong', async () => {
    const controlPlane = new FakeCell('control-plane');
    const usage = new ControlPlaneUsage(controlPlane as never);
    expect((await usage.usage('shop', ['persistentvolumeclaims'], signal, true)).uncounted).toEqual([
      'persistentvolumeclaims',
    ]);
    const unscoped = await usage.usage('shop', ['requests.cpu', 'pods'], signal);
    expect(unscoped.uncounted).toEqual(['requests.cpu']);
    expect(Object.fromEntries(unscoped.usage)).toEqual({ pods: 0n });
  });

  it('names what it may not list or the control plane does not serve, and counts the rest', async () => {
    const controlPlane = new FakeCell('control-plane');
    const client = {
      request: (method: string, path: string, options?: object) => {
        if (path.includes('/secrets'))
          return Promise.reject(new ApiError(403, { code: 403, reason: 'Forbidden' }, `GET ${path}`));
        if (path === '/apis/example.com')
          return Promise.reject(new ApiError(404, { code: 404, reason: 'NotFound' }, `GET ${path}`));
        return controlPlane.request(method, path, options);
      },
    };
    const { usage, uncounted } = await new ControlPlaneUsage(client as never).usage(
      'shop',
      ['secrets', 'count/widgets.example.com', 'replicationcontrollers'],
      signal,
    );
    expect(Object.fromEntries(usage)).toEqual({ replicationcontrollers: 0n });
    expect(uncounted).toEqual(['secrets', 'count/widgets.example.com']);
  });
});
