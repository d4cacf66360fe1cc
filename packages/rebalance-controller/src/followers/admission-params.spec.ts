import { type KubeObject, type ObjectMeta, type CellularObjectRef } from '@cellfed/federation';

import { AdmissionParams } from './admission-params.ts';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };

const policy = (name: string, paramKind?: { apiVersion: string; kind: string }) =>
  ({ metadata: { name }, spec: paramKind ? { paramKind } : {} }) as KubeObject;
const binding = (policyName: string, paramRef?: object) =>
  ({
    metadata: { name: `${policyName}-binding` },
    spec: { policyName, ...(paramRef ? { paramRef } : {}) },
  }) as KubeObject;

describe('AdmissionParams', () => {
  it('takes the paramRefs of bindings whose policy takes a ConfigMap or a Secret, and no other', () => {
    const params = AdmissionParams.of([
      {
        policies: [
          policy('by-name', { apiVersion: 'v1', kind: 'ConfigMap' }),
          policy('by-selector', { apiVersion: 'v1', kind: 'ConfigMap' }),
          policy('secret', { apiVersion: 'v1', kind: 'Secret' }),
          policy('custom', { apiVersion: 'example.com/v1', kind: 'Limits' }),
          policy('none'),
        ],
        bindings: [
          binding('by-name', { name: 'limits', parameterNotFoundAction: 'Deny' }),
          binding('by-selector', { namespace: 'shop', selector: { matchLabels: { tier: 'limits' } } }),
          binding('secret', { namespace: 'shop', name: 'token' }),
          binding('custom', { name: 'limits' }),
          binding('none'),
          binding('missing-policy', { name: 'limits' }),
        ],
      },
      // Mutating bindings name mutating policies only.
      {
        policies: [policy('by-name-too', { apiVersion: 'v1', kind: 'ConfigMap' })],
        bindings: [binding('by-name', { name: 'ignored' }), binding('by-name-too', { name: 'defaults' })],
      },
    ]);
    expect(params.wants).toEqual(
      expect.arrayContaining([
        { resource: 'configmaps', name: 'limits' },
        { resource: 'configmaps', namespace: 'shop', selector: { matchLabels: { tier: 'limits' } } },
        { resource: 'secrets', namespace: 'shop', name: 'token' },
        { resource: 'configmaps', name: 'defaults' },
      ]),
    );
    expect(params.wants).toHaveLength(4);
  });

  it('is equal to itself built again in another order, and not after a binding changes', () => {
    const policies = [policy('p', { apiVersion: 'v1', kind: 'ConfigMap' })];
    const one = binding('p', { name: 'a' });
    const two = { ...binding('p', { name: 'b' }), metadata: { name: 'other' } } as KubeObject;
    const forward = AdmissionParams.of([{ policies, bindings: [one, two] }]);
    expect(forward.equals(AdmissionParams.of([{ policies, bindings: [two, one] }]))).toBe(true);
    expect(forward.equals(AdmissionParams.of([{ policies, bindings: [one] }]))).toBe(false);
    expect(AdmissionParams.of([{ policies, bindings: [] }]).equals(AdmissionParams.NONE)).toBe(true);
  });

  it('picks a cellular kind’s params from the objects present, and a control-plane kind’s by namespace and name only', () => {
    const params = new AdmissionParams([
      { resource: 'configmaps', name: 'limits' },
      { resource: 'configmaps', namespace: 'shop', selector: { matchLabels: { tier: 'limits' } } },
      { resource: 'secrets', namespace: 'shop', name: 'token' },
      { resource: 'secrets', name: 'everywhere' },
    ]);
    const present = [
      { name: 'limits' },
      { name: 'tiered', labels: { tier: 'limits' } },
      { name: 'plain', labels: { tier: 'web' } },
    ];
    expect([...params.namesIn('configmaps', 'shop', present, true)].sort()).toEqual(['limits', 'tiered']);
    expect([...params.namesIn('configmaps', 'pay', present, true)]).toEqual(['limits']);
    expect([...params.namesIn('configmaps', 'pay', [], true)]).toEqual([]);
    expect([...params.namesIn('secrets', 'shop', [], false)]).toEqual(['token']);
    expect([...params.namesIn('secrets', 'pay', [], false)]).toEqual([]);
    expect(params.names('configmaps', 'pay', { name: 'limits' })).toBe(true);
    expect(params.names('configmaps', 'pay', { name: 'tiered', labels: { tier: 'limits' } })).toBe(false);
    expect(params.names('configmaps', 'shop', { name: 'tiered', labels: { tier: 'limits' } })).toBe(true);
  });

  it('finds the namespaces params are in: a want’s own, and those whose objects in the cells it names', () => {
    const params = new AdmissionParams([
      { resource: 'secrets', namespace: 'vault', name: 'token' },
      { resource: 'configmaps', name: 'limits' },
    ]);
    const objects = [
      { resource: CONFIGMAPS, namespace: 'shop', name: 'limits' },
      { resource: CONFIGMAPS, namespace: 'pay', name: 'other' },
      { resource: DEPLOYMENTS, namespace: 'web', name: 'limits' },
    ];
    const copies = {
      eachCopy: (visit: (cell: string, ref: CellularObjectRef, metadata: ObjectMeta) => void) => {
        for (const ref of objects) visit('a', ref, {});
      },
    };
    expect([...params.namespaces(copies)].sort()).toEqual(['shop', 'vault']);
    expect([...AdmissionParams.NONE.namespaces(copies)]).toEqual([]);
  });
});
