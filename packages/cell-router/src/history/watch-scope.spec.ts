import type { HistoryEntry } from './resource-history.ts';
import { isExactScope, watchScope } from './watch-scope.ts';

const entry = (change: Partial<HistoryEntry>): HistoryEntry => ({
  seq: 0,
  source: 'cell-1',
  version: 1,
  type: 'MODIFIED',
  namespace: 'ns',
  name: 'a',
  labels: {},
  previousLabels: null,
  ...change,
});

const scope = (namespace: string | undefined, query: string) =>
  watchScope(namespace, new URLSearchParams(query));

describe('watchScope', () => {
  it('selects by the namespace of the path', () => {
    expect(scope('ns', '')(entry({}))).toBe('yes');
    expect(scope('other', '')(entry({}))).toBe('no');
    expect(scope(undefined, '')(entry({ namespace: 'x' }))).toBe('yes');
  });

  it('selects by labels after the change, or before it for a MODIFIED, as a filtered watch does', () => {
    const watch = scope('ns', 'labelSelector=app%3Dweb');
    expect(watch(entry({ labels: { app: 'web' } }))).toBe('yes');
    expect(watch(entry({ labels: {}, previousLabels: { app: 'web' } }))).toBe('yes');
    expect(watch(entry({ labels: {}, previousLabels: { app: 'db' } }))).toBe('no');
    expect(watch(entry({ labels: {}, previousLabels: undefined }))).toBe('unknown');
    expect(watch(entry({ type: 'ADDED', labels: {}, previousLabels: undefined }))).toBe('no');
    expect(watch(entry({ type: 'DELETED', labels: { app: 'web' } }))).toBe('yes');
  });

  it('selects by name and namespace fields; other fields leave it unknown unless ruled out', () => {
    expect(scope(undefined, 'fieldSelector=metadata.name%3Da')(entry({}))).toBe('yes');
    expect(scope(undefined, 'fieldSelector=metadata.name%3Db')(entry({}))).toBe('no');
    expect(scope(undefined, 'fieldSelector=metadata.name!%3Da')(entry({}))).toBe('no');
    expect(scope(undefined, 'fieldSelector=metadata.namespace%3Dns')(entry({}))).toBe('yes');
    expect(scope(undefined, 'fieldSelector=spec.nodeName%3Dn1')(entry({}))).toBe('unknown');
    expect(scope(undefined, 'fieldSelector=spec.nodeName%3Dn1,metadata.name%3Db')(entry({}))).toBe('no');
  });

  it('decides nothing on a selector it cannot read', () => {
    expect(scope(undefined, 'labelSelector=app%3D(')(entry({}))).toBe('unknown');
    expect(scope(undefined, 'fieldSelector=%3D%3D')(entry({}))).toBe('unknown');
  });

  it('is exact only for selectors it can judge', () => {
    const exact = (query: string) => isExactScope(new URLSearchParams(query));
    expect(exact('')).toBe(true);
    expect(exact('labelSelector=a%20in%20(b)&fieldSelector=metadata.name%3Dx,metadata.namespace!%3Dy')).toBe(
      true,
    );
    expect(exact('fieldSelector=spec.nodeName%3Dn')).toBe(false);
    expect(exact('labelSelector=a%3D(')).toBe(false);
  });
});
