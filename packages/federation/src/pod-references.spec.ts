import type { KubeObject } from './kube-object.ts';
import { hasPodTemplate, podReferences } from './pod-references.ts';

const workload = (kind: string, spec: unknown): KubeObject =>
  ({ apiVersion: 'apps/v1', kind, metadata: { name: 'web', namespace: 'shop' }, spec }) as KubeObject;

const podSpec = {
  imagePullSecrets: [{ name: 'registry' }],
  volumes: [
    { name: 'settings', configMap: { name: 'settings' } },
    { name: 'tls', secret: { secretName: 'web-tls' } },
    { name: 'scratch', emptyDir: {} },
    { name: 'data', persistentVolumeClaim: { claimName: 'web-data' } },
    {
      name: 'bundle',
      projected: {
        sources: [
          { configMap: { name: 'ca-bundle' } },
          { secret: { name: 'bundle-key' } },
          { serviceAccountToken: { path: 'token' } },
        ],
      },
    },
  ],
  initContainers: [{ name: 'init', envFrom: [{ secretRef: { name: 'init-env' } }] }],
  containers: [
    {
      name: 'web',
      env: [
        { name: 'PLAIN', value: 'x' },
        { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'modes', key: 'mode' } } },
        { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password', optional: true } } },
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      ],
      envFrom: [{ configMapRef: { name: 'web-env' } }],
    },
  ],
  ephemeralContainers: [{ name: 'debug', envFrom: [{ configMapRef: { name: 'debug-env' } }] }],
};

describe('podReferences', () => {
  it('finds every ConfigMap, Secret and claim a pod template names: volumes, projections, env, envFrom, pull secrets', () => {
    const found = podReferences(workload('Deployment', { template: { spec: podSpec } }));
    expect([...found.configMaps].sort()).toEqual(['ca-bundle', 'debug-env', 'modes', 'settings', 'web-env']);
    expect([...found.secrets].sort()).toEqual(['bundle-key', 'db', 'init-env', 'registry', 'web-tls']);
    expect([...found.claims]).toEqual(['web-data']);
  });

  it('reads a CronJob’s template under its job template', () => {
    const cronJob = workload('CronJob', {
      schedule: '* * * * *',
      jobTemplate: {
        spec: { template: { spec: { containers: [{ envFrom: [{ secretRef: { name: 'k' } }] }] } } },
      },
    });
    expect([...podReferences(cronJob).secrets]).toEqual(['k']);
  });

  it('finds nothing in an object without a pod template, or a template without references', () => {
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x' },
      data: {},
    } as KubeObject;
    expect(podReferences(configMap)).toEqual({
      configMaps: new Set(),
      secrets: new Set(),
      claims: new Set(),
    });
    const bare = podReferences(
      workload('Deployment', { template: { spec: { containers: [{ name: 'c' }] } } }),
    );
    expect(bare.configMaps.size + bare.secrets.size).toBe(0);
  });
});

describe('hasPodTemplate', () => {
  it.each([
    ['apps', 'deployments', true],
    ['apps', 'statefulsets', true],
    ['batch', 'cronjobs', true],
    ['', 'replicationcontrollers', true],
    ['', 'configmaps', false],
    ['', 'pods', false],
    ['example.com', 'deployments', false],
  ])('%s/%s: %s', (group, resource, expected) => {
    expect(hasPodTemplate({ group, resource })).toBe(expected);
  });
});
