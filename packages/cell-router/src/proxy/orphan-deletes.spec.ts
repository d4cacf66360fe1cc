import { orphansDependents } from './orphan-deletes.ts';

describe('orphansDependents', () => {
  const body = (options: unknown) => Buffer.from(JSON.stringify(options));

  it('reads the propagation policy from the query or the DeleteOptions body, old and new spelling', () => {
    expect(
      orphansDependents('/apis/apps/v1/namespaces/a/deployments/web?propagationPolicy=Orphan', undefined),
    ).toBe(true);
    expect(orphansDependents('/x?orphanDependents=true', undefined)).toBe(true);
    expect(orphansDependents('/x', body({ kind: 'DeleteOptions', propagationPolicy: 'Orphan' }))).toBe(true);
    expect(orphansDependents('/x', body({ orphanDependents: true }))).toBe(true);
  });

  it('is false for background and foreground deletes, no options, and bodies it cannot read', () => {
    expect(orphansDependents('/x?propagationPolicy=Background', undefined)).toBe(false);
    expect(orphansDependents('/x', body({ propagationPolicy: 'Foreground' }))).toBe(false);
    expect(orphansDependents('/x', Buffer.alloc(0))).toBe(false);
    expect(orphansDependents('/x', Buffer.from('k8s\0 protobuf'))).toBe(false);
  });
});
