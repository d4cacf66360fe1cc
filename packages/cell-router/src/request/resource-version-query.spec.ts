import { parseRequestInfo } from './request-info.ts';
import { resourceVersionProblem } from './resource-version-query.ts';

function problem(method: string, target: string): string | undefined {
  return resourceVersionProblem(parseRequestInfo(method, target));
}

describe('resourceVersionProblem', () => {
  it.each([
    ['GET', '/api/v1/namespaces/a/configmaps/x'],
    ['GET', '/api/v1/namespaces/a/configmaps/x?resourceVersion='],
    ['GET', '/api/v1/namespaces/a/configmaps/x?resourceVersion=0'],
    ['GET', '/api/v1/namespaces/a/configmaps/x?resourceVersion=18446744073709551615'],
    ['GET', '/api/v1/namespaces/a/configmaps?resourceVersion=cf1.abc'],
    ['GET', '/api/v1/namespaces/a/configmaps/x?resourceVersion=cf1.abc'],
    ['GET', '/api/v1/namespaces/a/configmaps?watch=1&resourceVersion=cf1.abc'],
    ['GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles?resourceVersion=12'],
    // Not a resource request: kube-apiserver does not read the query either.
    ['GET', '/version?resourceVersion=-5'],
  ])('lets %s %s through', (method, target) => {
    expect(problem(method, target)).toBeUndefined();
  });

  it.each([
    [
      'GET',
      '/api/v1/namespaces/kube-system/pods/a.b?resourceVersion=-5',
      'not a resourceVersion an apiserver gave out',
    ],
    [
      'GET',
      '/api/v1/namespaces/a/configmaps?resourceVersion=abc',
      'not a resourceVersion an apiserver gave out',
    ],
    [
      'DELETE',
      '/api/v1/namespaces/a/configmaps/x?resourceVersion=1e3',
      'not a resourceVersion an apiserver gave out',
    ],
    ['DELETE', '/api/v1/namespaces/a/configmaps/x?resourceVersion=cf1.abc', "a list's resourceVersion"],
  ])('refuses %s %s (kube-apiserver fails with a 500)', (method, target, why) => {
    expect(problem(method, target)).toMatch(/^resourceVersion: Invalid value: ".*": /);
    expect(problem(method, target)).toContain(why);
  });
});
