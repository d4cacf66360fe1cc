import { continueAfter, tokenShape } from './cell-continue.ts';

const token = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const read = (minted: string | undefined) => JSON.parse(Buffer.from(minted!, 'base64url').toString('utf8'));
const issued = (start: string, rv = 4242) => token({ v: 'meta.k8s.io/v1', rv, start: `${start}\u0000` });

describe('tokenShape and continueAfter', () => {
  it('learns a namespaced list key (as kube-apiserver issues it, "/name") and moves it on', () => {
    const shape = tokenShape(issued('/config-9'), { namespace: 'bench', name: 'config-9' });
    expect(shape).toEqual({ rv: 4242, lead: '/', withNamespace: false });
    expect(read(continueAfter(shape!, { namespace: 'bench', name: 'config-17' }))).toEqual({
      v: 'meta.k8s.io/v1',
      rv: 4242,
      start: '/config-17\u0000',
    });
  });

  it('learns a list across namespaces ("namespace/name") and keeps the namespace in the key', () => {
    const shape = tokenShape(issued('bench/config-9', 7), { namespace: 'bench', name: 'config-9' });
    expect(shape).toEqual({ rv: 7, lead: '', withNamespace: true });
    const minted = continueAfter(shape!, { namespace: 'other', name: 'a' });
    expect(read(minted).start).toBe('other/a\u0000');
    // As a real token: base64url without padding.
    expect(minted).not.toMatch(/[=+/]/);
    expect(continueAfter(shape!, { name: 'no-namespace' })).toBeUndefined();
  });

  it('learns nothing from a token of another shape or one that does not follow the object', () => {
    const last = { namespace: 'ns', name: 'a' };
    for (const other of [
      undefined,
      'not base64 json',
      token({ v: 'meta.k8s.io/v2', rv: 1, start: 'ns/a\u0000' }),
      token({ v: 'meta.k8s.io/v1', rv: '1', start: 'ns/a\u0000' }),
      token({ v: 'meta.k8s.io/v1', rv: 1, start: 'ns/a' }),
      token({ v: 'meta.k8s.io/v1', rv: 1, start: 'ns/a\u0000', extra: true }),
      issued('ns/b'),
      issued('ns/ba'),
    ]) {
      expect(tokenShape(other, last)).toBeUndefined();
    }
  });
});
