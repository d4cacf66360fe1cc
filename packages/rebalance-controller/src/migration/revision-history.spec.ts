import { type KubeObject } from '@cellfed/federation';

import { historyOf, historyResourceOf, historySelector } from './revision-history.ts';

const owner: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', uid: 'owner' },
  spec: { selector: { matchLabels: { app: 'web', tier: 'front' } } },
};

function item(
  name: string,
  revision: { annotation?: string; field?: number },
  controller = true,
): KubeObject {
  return {
    metadata: {
      name,
      ...(revision.annotation
        ? { annotations: { 'deployment.kubernetes.io/revision': revision.annotation } }
        : {}),
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'owner', controller }],
    },
    ...(revision.field !== undefined ? { revision: revision.field } : {}),
  };
}

describe('revision history', () => {
  it('is kept by Deployments, StatefulSets and DaemonSets only', () => {
    expect(historyResourceOf({ group: 'apps', resource: 'deployments' })?.resource).toBe('replicasets');
    expect(historyResourceOf({ group: 'apps', resource: 'statefulsets' })?.resource).toBe(
      'controllerrevisions',
    );
    expect(historyResourceOf({ group: 'apps', resource: 'daemonsets' })?.resource).toBe(
      'controllerrevisions',
    );
    expect(historyResourceOf({ group: '', resource: 'configmaps' })).toBeUndefined();
    expect(historyResourceOf({ group: 'batch', resource: 'cronjobs' })).toBeUndefined();
  });

  it("is listed by the owner's matchLabels, or whole without them", () => {
    expect(historySelector(owner)).toBe('app=web,tier=front');
    expect(historySelector({ metadata: {}, spec: { selector: { matchExpressions: [] } } })).toBe('');
  });

  it('is what the owner controls, newest revision first (annotation or field)', () => {
    const listed = [
      item('two', { annotation: '2' }),
      item('ten', { annotation: '10' }),
      item('adopted-elsewhere', { annotation: '11' }, false),
      item('three', { field: 3 }),
      item('none', {}),
    ];
    expect(historyOf(listed, owner).map((one) => one.metadata.name)).toEqual(['ten', 'three', 'two', 'none']);
  });
});
