import { DependentsIndex, groupOf, ownerName } from './dependents-index.ts';

describe('DependentsIndex', () => {
  it('finds the dependents of an owner, and forgets what a dependent no longer holds', () => {
    const index = new DependentsIndex();
    const web = ownerName('apps', 'demo', 'web');
    const api = ownerName('apps', 'demo', 'api');
    index.set('configmaps/demo/a', new Set([web]));
    index.set('configmaps/demo/b', new Set([web, api]));
    expect(index.dependents(web)).toEqual(['configmaps/demo/a', 'configmaps/demo/b']);
    index.set('configmaps/demo/b', new Set([api]));
    expect(index.dependents(web)).toEqual(['configmaps/demo/a']);
    expect(index.dependents(api)).toEqual(['configmaps/demo/b']);
    index.set('configmaps/demo/a', new Set());
    expect(index.dependents(web)).toEqual([]);
    expect(index.all()).toEqual(['configmaps/demo/b']);
  });

  it('names owners by the group of their apiVersion', () => {
    expect(groupOf('apps/v1')).toBe('apps');
    expect(groupOf('v1')).toBe('');
    expect(ownerName(groupOf('batch/v1'), 'ns', 'job')).toBe('batch/ns/job');
  });
});
