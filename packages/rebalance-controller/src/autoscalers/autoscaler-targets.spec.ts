import type { HorizontalPodAutoscaler } from './autoscaler-copy.ts';
import { AutoscalerTargets } from './autoscaler-targets.ts';

const targeting = (target: string): HorizontalPodAutoscaler => ({
  metadata: {},
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target } },
});

describe('AutoscalerTargets', () => {
  it('answers the autoscalers naming a target, following retargets and deletions, per namespace', () => {
    const targets = new AutoscalerTargets();
    targets.set('shop', 'web-a', targeting('web'));
    targets.set('shop', 'web-b', targeting('web'));
    targets.set('other', 'web-c', targeting('web'));
    expect(targets.of('shop', 'web').sort()).toEqual(['web-a', 'web-b']);
    targets.set('shop', 'web-b', targeting('api'));
    expect(targets.of('shop', 'web')).toEqual(['web-a']);
    expect(targets.of('shop', 'api')).toEqual(['web-b']);
    targets.set('shop', 'web-a', undefined);
    expect(targets.of('shop', 'web')).toEqual([]);
    expect(targets.of('other', 'web')).toEqual(['web-c']);
  });
});
