import { QUIESCED_ANNOTATION, QUIESCED_NODE_LABEL } from '@cellfed/api';
import { type KubeObject } from '@cellfed/federation';

import { heldUntilCommit, quiescePatch, quiesces } from './quiesce.ts';

const object = (spec: Record<string, unknown>, annotations: Record<string, string> = {}): KubeObject =>
  ({ metadata: { name: 'web', resourceVersion: '42', annotations }, spec }) as KubeObject;

describe('quiescePatch', () => {
  it.each([
    ['apps', 'deployments', { replicas: 3 }, { replicas: 0 }, '{"replicas":3}'],
    ['apps', 'statefulsets', { replicas: 2 }, { replicas: 0 }, '{"replicas":2}'],
    ['apps', 'replicasets', {}, { replicas: 0 }, '{"replicas":null}'],
    ['', 'replicationcontrollers', { replicas: 1 }, { replicas: 0 }, '{"replicas":1}'],
    ['batch', 'jobs', { parallelism: 2 }, { suspend: true }, '{"suspend":null}'],
    ['batch', 'cronjobs', { suspend: false }, { suspend: true }, '{"suspend":false}'],
    [
      'apps',
      'daemonsets',
      { template: { spec: { nodeSelector: { disk: 'ssd' } } } },
      { template: { spec: { nodeSelector: { [QUIESCED_NODE_LABEL]: 'true' } } } },
      '{"nodeSelector":{"disk":"ssd"}}',
    ],
    [
      'apps',
      'daemonsets',
      { template: { spec: {} } },
      { template: { spec: { nodeSelector: { [QUIESCED_NODE_LABEL]: 'true' } } } },
      '{"nodeSelector":null}',
    ],
  ])(
    'stops %s/%s from running in its old cell, and records what it was',
    (group, resource, spec, change, was) => {
      expect(quiescePatch({ group, resource }, object(spec))).toEqual({
        metadata: { resourceVersion: '42', annotations: { [QUIESCED_ANNOTATION]: was } },
        spec: change,
      });
      expect(quiesces({ group, resource })).toBe(true);
    },
  );

  it('leaves what runs nothing, and what is quiesced or at rest already', () => {
    expect(quiescePatch({ group: '', resource: 'configmaps' }, object({}))).toBeUndefined();
    const onNoNode = { template: { spec: { nodeSelector: { [QUIESCED_NODE_LABEL]: 'true' } } } };
    expect(quiescePatch({ group: 'apps', resource: 'daemonsets' }, object(onNoNode))).toBeUndefined();
    expect(quiesces({ group: '', resource: 'configmaps' })).toBe(false);
    const done = object({ replicas: 0 }, { [QUIESCED_ANNOTATION]: '{"replicas":3}' });
    expect(quiescePatch({ group: 'apps', resource: 'deployments' }, done)).toBeUndefined();
    expect(quiescePatch({ group: 'batch', resource: 'cronjobs' }, object({ suspend: true }))).toBeUndefined();
  });
});

describe('heldUntilCommit', () => {
  it('holds a running Job or CronJob suspended until the commit, recording the field to set back', () => {
    expect(heldUntilCommit({ group: 'batch', resource: 'jobs' }, object({ parallelism: 2 }))).toEqual({
      spec: { suspend: true },
      held: { suspend: null },
    });
    expect(heldUntilCommit({ group: 'batch', resource: 'cronjobs' }, object({ suspend: false }))).toEqual({
      spec: { suspend: true },
      held: { suspend: false },
    });
  });

  it('holds nothing back of a suspended Job, or of workloads that scale (their new pods come up beside the old)', () => {
    expect(heldUntilCommit({ group: 'batch', resource: 'jobs' }, object({ suspend: true }))).toBeUndefined();
    expect(
      heldUntilCommit({ group: 'apps', resource: 'deployments' }, object({ replicas: 3 })),
    ).toBeUndefined();
    expect(heldUntilCommit({ group: '', resource: 'configmaps' }, object({}))).toBeUndefined();
  });
});
