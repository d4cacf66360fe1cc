import { MILLI, UNIT } from './quantity.ts';
import { countedResource, countsObjects, shareStep } from './quota-names.ts';

describe('quota resource names', () => {
  it.each([
    ['pods', '', 'pods', true],
    ['count/pods', '', 'pods', true],
    ['cpu', '', 'pods', false],
    ['requests.memory', '', 'pods', false],
    ['limits.ephemeral-storage', '', 'pods', false],
    ['hugepages-2Mi', '', 'pods', false],
    ['requests.example.com/dongle', '', 'pods', false],
    ['services.nodeports', '', 'services', false],
    ['services', '', 'services', true],
    ['requests.storage', '', 'persistentvolumeclaims', false],
    ['gold.storageclass.storage.k8s.io/requests.storage', '', 'persistentvolumeclaims', false],
    ['gold.storageclass.storage.k8s.io/persistentvolumeclaims', '', 'persistentvolumeclaims', false],
    ['configmaps', '', 'configmaps', true],
    ['count/deployments.apps', 'apps', 'deployments', true],
    ['count/widgets.example.com', 'example.com', 'widgets', true],
  ])('%s counts %s/%s (objects: %s)', (name, group, resource, objects) => {
    expect(countedResource(name)).toEqual({ group, resource });
    expect(countsObjects(name)).toBe(objects);
  });

  it('knows no evaluator for other names', () => {
    expect(countedResource('bogus')).toBeUndefined();
    expect(countedResource('count/')).toBeUndefined();
  });

  it('divides CPU in milli-CPUs and everything else in whole units', () => {
    expect(shareStep('requests.cpu')).toBe(MILLI);
    expect(shareStep('cpu')).toBe(MILLI);
    expect(shareStep('limits.cpu')).toBe(MILLI);
    expect(shareStep('pods')).toBe(UNIT);
    expect(shareStep('requests.memory')).toBe(UNIT);
  });
});
