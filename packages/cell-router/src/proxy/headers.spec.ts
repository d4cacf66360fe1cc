import { downstreamHeaders, upstreamHeaders } from './headers.ts';

describe('proxy headers', () => {
  it("never forwards the caller's credentials, impersonation or hop-by-hop headers", () => {
    const headers = upstreamHeaders(
      {
        authorization: 'Bearer secret',
        'impersonate-user': 'root',
        'impersonate-group': 'system:masters',
        connection: 'keep-alive',
        host: 'router:6443',
        accept: 'application/json',
        'content-type': 'application/apply-patch+yaml',
        'user-agent': 'kubectl/v1.37.2',
      },
      { 'Impersonate-User': 'alice' },
    );
    expect(headers).toEqual({
      accept: 'application/json',
      'content-type': 'application/apply-patch+yaml',
      'user-agent': 'kubectl/v1.37.2',
      'Impersonate-User': 'alice',
    });
  });

  it('never forwards where a caller says it comes from, front-proxy identities, Expect, or what Connection names', () => {
    expect(
      upstreamHeaders(
        {
          'x-forwarded-for': '10.0.0.1',
          'x-real-ip': '10.0.0.1',
          forwarded: 'for=10.0.0.1',
          'x-forwarded-proto': 'https',
          'x-remote-user': 'system:admin',
          'x-remote-group': 'system:masters',
          'x-remote-extra-scopes': 'all',
          expect: '100-continue',
          connection: 'keep-alive, X-Secret-Hop',
          'x-secret-hop': 'token',
          accept: 'application/json',
        },
        { 'x-forwarded-for': '192.0.2.7' },
      ),
    ).toEqual({ accept: 'application/json', 'x-forwarded-for': '192.0.2.7' });
  });

  it('sets the length of a buffered body', () => {
    expect(upstreamHeaders({ 'content-length': '99' }, {}, 12)).toEqual({ 'content-length': '12' });
  });

  it('passes an apiserver answer’s own headers, by allow-list, and nothing else a cell sends', () => {
    const answer = {
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
      'content-length': '5',
      'audit-id': 'x',
      warning: '299 - "deprecated"',
      'x-kubernetes-pf-flowschema-uid': 'f',
      'set-cookie': 'session=1',
      'x-cell-internal': 'cell-2.internal:6443',
    };
    expect(downstreamHeaders(answer, '/api/v1/namespaces/shop/configmaps/app')).toEqual({
      'content-type': 'application/json',
      'content-length': '5',
      'audit-id': 'x',
      warning: '299 - "deprecated"',
      'x-kubernetes-pf-flowschema-uid': 'f',
    });
    // A proxy subresource's answer is the proxied server's: all but the hop-by-hop headers, as kube relays it.
    expect(downstreamHeaders(answer, '/api/v1/namespaces/shop/services/web/proxy/login?next=/')).toEqual({
      'content-type': 'application/json',
      'content-length': '5',
      'audit-id': 'x',
      warning: '299 - "deprecated"',
      'x-kubernetes-pf-flowschema-uid': 'f',
      'set-cookie': 'session=1',
      'x-cell-internal': 'cell-2.internal:6443',
    });
  });
});
