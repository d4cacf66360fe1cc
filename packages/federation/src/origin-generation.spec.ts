import { annotationsBumpGeneration, showsOriginGeneration } from './origin-generation.ts';

describe('which copies show the generation clients knew', () => {
  it('is every built-in kind, never a custom resource; and only a Deployment counts annotations', () => {
    for (const group of ['', 'apps', 'batch', 'networking.k8s.io', 'policy'])
      expect(showsOriginGeneration({ group })).toBe(true);
    for (const group of ['example.com', 'cells.cellfed.io'])
      expect(showsOriginGeneration({ group })).toBe(false);
    expect(annotationsBumpGeneration({ group: 'apps', resource: 'deployments' })).toBe(true);
    expect(annotationsBumpGeneration({ group: 'apps', resource: 'statefulsets' })).toBe(false);
  });
});
