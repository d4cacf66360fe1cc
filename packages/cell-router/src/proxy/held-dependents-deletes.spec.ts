import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '@cellfed/api';
import { heldDependentsFinalizer } from './held-dependents-deletes.ts';

describe('heldDependentsFinalizer', () => {
  const body = (options: unknown) => Buffer.from(JSON.stringify(options));

  it('holds an orphaning delete, from the query or the DeleteOptions body, old and new spelling', () => {
    expect(
      heldDependentsFinalizer(
        '/apis/apps/v1/namespaces/a/deployments/web?propagationPolicy=Orphan',
        undefined,
      ),
    ).toBe(ORPHAN_FINALIZER);
    expect(heldDependentsFinalizer('/x?orphanDependents=true', undefined)).toBe(ORPHAN_FINALIZER);
    expect(heldDependentsFinalizer('/x', body({ kind: 'DeleteOptions', propagationPolicy: 'Orphan' }))).toBe(
      ORPHAN_FINALIZER,
    );
    expect(heldDependentsFinalizer('/x', body({ orphanDependents: true }))).toBe(ORPHAN_FINALIZER);
  });

  it('holds a foreground delete until the held dependents are gone', () => {
    expect(heldDependentsFinalizer('/x?propagationPolicy=Foreground', undefined)).toBe(FOREGROUND_FINALIZER);
    expect(heldDependentsFinalizer('/x', body({ propagationPolicy: 'Foreground' }))).toBe(
      FOREGROUND_FINALIZER,
    );
  });

  it('holds nothing for background deletes, no options, and bodies it cannot read', () => {
    expect(heldDependentsFinalizer('/x?propagationPolicy=Background', undefined)).toBeUndefined();
    expect(heldDependentsFinalizer('/x', Buffer.alloc(0))).toBeUndefined();
    expect(heldDependentsFinalizer('/x', Buffer.from('k8s\0 protobuf'))).toBeUndefined();
  });
});
