import { parseRequestInfo } from './request-info.ts';

// Cases from kube-apiserver's requestinfo_test.go, plus the ones the router depends on.
describe('parseRequestInfo', () => {
  it.each([
    // method, path, verb, group, version, namespace, resource, subresource, name
    ['GET', '/api/v1/namespaces', 'list', '', 'v1', '', 'namespaces', '', ''],
    ['GET', '/api/v1/namespaces/other', 'get', '', 'v1', 'other', 'namespaces', '', 'other'],
    ['GET', '/api/v1/namespaces/other/status', 'get', '', 'v1', 'other', 'namespaces', 'status', 'other'],
    [
      'PUT',
      '/api/v1/namespaces/other/finalize',
      'update',
      '',
      'v1',
      'other',
      'namespaces',
      'finalize',
      'other',
    ],
    ['GET', '/api/v1/namespaces/other/pods', 'list', '', 'v1', 'other', 'pods', '', ''],
    ['GET', '/api/v1/namespaces/other/pods/foo', 'get', '', 'v1', 'other', 'pods', '', 'foo'],
    ['HEAD', '/api/v1/namespaces/other/pods/foo', 'get', '', 'v1', 'other', 'pods', '', 'foo'],
    ['GET', '/api/v1/pods', 'list', '', 'v1', '', 'pods', '', ''],
    ['GET', '/api/v1/namespaces/other/pods/foo/log', 'get', '', 'v1', 'other', 'pods', 'log', 'foo'],
    ['POST', '/api/v1/namespaces/other/pods/foo/exec', 'create', '', 'v1', 'other', 'pods', 'exec', 'foo'],
    ['GET', '/api/v1/watch/namespaces/other/pods', 'watch', '', 'v1', 'other', 'pods', '', ''],
    ['GET', '/api/v1/watch/namespaces/other/pods/foo', 'watch', '', 'v1', 'other', 'pods', '', 'foo'],
    ['GET', '/api/v1/proxy/namespaces/other/pods/foo/a/b', 'proxy', '', 'v1', 'other', 'pods', '', 'foo'],
    [
      'POST',
      '/apis/apps/v1/namespaces/other/deployments',
      'create',
      'apps',
      'v1',
      'other',
      'deployments',
      '',
      '',
    ],
    [
      'PUT',
      '/apis/apps/v1/namespaces/other/deployments/web',
      'update',
      'apps',
      'v1',
      'other',
      'deployments',
      '',
      'web',
    ],
    [
      'PATCH',
      '/apis/apps/v1/namespaces/o/deployments/web/scale',
      'patch',
      'apps',
      'v1',
      'o',
      'deployments',
      'scale',
      'web',
    ],
    [
      'PUT',
      '/apis/apps/v1/namespaces/o/deployments/web/status',
      'update',
      'apps',
      'v1',
      'o',
      'deployments',
      'status',
      'web',
    ],
    [
      'DELETE',
      '/apis/apps/v1/namespaces/o/deployments/web',
      'delete',
      'apps',
      'v1',
      'o',
      'deployments',
      '',
      'web',
    ],
    [
      'DELETE',
      '/apis/apps/v1/namespaces/o/deployments',
      'deletecollection',
      'apps',
      'v1',
      'o',
      'deployments',
      '',
      '',
    ],
    [
      'GET',
      '/apis/cells.cellfed.io/v1alpha1/cellsets/default',
      'get',
      'cells.cellfed.io',
      'v1alpha1',
      '',
      'cellsets',
      '',
      'default',
    ],
  ])('%s %s', (method, path, verb, apiGroup, apiVersion, namespace, resource, subresource, name) => {
    expect(parseRequestInfo(method, path)).toEqual({
      isResourceRequest: true,
      path,
      verb,
      apiPrefix: apiGroup === '' ? 'api' : 'apis',
      apiGroup,
      apiVersion,
      namespace,
      resource,
      subresource,
      name,
    });
  });

  it('tells a watch from a list by the query, and takes the name from a metadata.name field selector', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/o/configmaps?watch=true')).toMatchObject({
      verb: 'watch',
      name: '',
    });
    expect(
      parseRequestInfo('GET', '/api/v1/namespaces/o/configmaps?watch=1&resourceVersion=5'),
    ).toMatchObject({
      verb: 'watch',
    });
    expect(parseRequestInfo('GET', '/api/v1/namespaces/o/configmaps?watch=false')).toMatchObject({
      verb: 'list',
    });
    // As kube-apiserver reads a boolean: all but 0 and false (any case) watch, an empty value too.
    for (const value of ['True', 'yes', ''])
      expect(parseRequestInfo('GET', `/api/v1/namespaces/o/configmaps?watch=${value}`)).toMatchObject({
        verb: 'watch',
      });
    expect(parseRequestInfo('GET', '/api/v1/namespaces/o/configmaps?watch=FALSE')).toMatchObject({
      verb: 'list',
    });
    expect(
      parseRequestInfo('GET', '/api/v1/namespaces/o/configmaps?fieldSelector=metadata.name%3Dcfg&watch=true'),
    ).toMatchObject({ verb: 'watch', name: 'cfg' });
    expect(
      parseRequestInfo('GET', '/api/v1/configmaps?fieldSelector=a%3Db,metadata.name%3D%3Dx'),
    ).toMatchObject({
      verb: 'list',
      name: 'x',
    });
  });

  it.each([
    ['GET', '/'],
    ['GET', '/version'],
    ['GET', '/healthz'],
    ['GET', '/api'],
    ['GET', '/api/v1'],
    ['GET', '/apis'],
    ['GET', '/apis/apps'],
    ['GET', '/apis/apps/v1'],
    ['GET', '/openapi/v3/apis/apps/v1'],
    ['OPTIONS', '/api/v1/namespaces/o/pods'],
    ['GET', '/other/v1/namespaces/o/pods'],
  ])('%s %s is not a resource request', (method, path) => {
    expect(parseRequestInfo(method, path)).toMatchObject({
      isResourceRequest: false,
      verb: method.toLowerCase(),
    });
  });

  it.each(['/api/v1/watch', '/api/v1/proxy', '/apis/apps/v1/watch'])(
    '%s names no resource after its verb: refused as kube-apiserver cannot place it either',
    (path) => {
      expect(() => parseRequestInfo('GET', path)).toThrow(/unable to determine kind and namespace/);
    },
  );

  // The router must read a path as kube-apiserver reads it (Go decodes escapes and resolves nothing), or it
  // would route one object while the apiserver acts on another.
  it.each([
    ['/api/v1/namespaces/team%2Fconfigmaps/web', 'team', 'configmaps', 'web'],
    ['/api/v1/namespaces/team/configmaps/%77eb', 'team', 'configmaps', 'web'],
    ['/api/v1/namespaces/team/configmaps/../secrets', 'team', 'configmaps', '..'],
    ['/api/v1/namespaces/team/configmaps/%2e%2e', 'team', 'configmaps', '..'],
    ['/api/v1/namespaces//configmaps/web', '', 'configmaps', 'web'],
    ['/api/v1/namespaces/team/configmaps/web#x', 'team', 'configmaps', 'web#x'],
  ])('reads %s as Go does: namespace %j, resource %j, name %j', (path, namespace, resource, name) => {
    expect(parseRequestInfo('GET', path)).toMatchObject({
      isResourceRequest: true,
      namespace,
      resource,
      name,
    });
  });

  it.each(['/%zz/namespaces', '/api/v1/namespaces/a%/pods', '/api/v1/namespaces/a%2/pods'])(
    'refuses %s: a "%" that does not start an escape, as Go does',
    (path) => {
      expect(() => parseRequestInfo('PUT', path)).toThrow(/does not start an escape/);
    },
  );

  it('refuses /apis/a%2Fb/watch as kube-apiserver reads it: /apis/a/b/watch, a watch of nothing', () => {
    expect(() => parseRequestInfo('GET', '/apis/a%2Fb/watch')).toThrow(/unable to determine kind/);
  });

  it('keeps the path without the query', () => {
    expect(parseRequestInfo('GET', '/version?timeout=32s')).toEqual({
      isResourceRequest: false,
      path: '/version',
      verb: 'get',
    });
  });
});
