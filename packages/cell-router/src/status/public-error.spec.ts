import { ApiError, ControllerKitError, ControllerKitErrorCode } from '@cellfed/controller-kit';

import { publicErrorMessage, withoutAddresses } from './public-error.ts';

describe('publicErrorMessage', () => {
  it('says a request of the router had no answer, and why, never where it went', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:6443'), { code: 'ECONNREFUSED' });
    const error = new ControllerKitError(
      ControllerKitErrorCode.Transport,
      'GET https://10.1.2.3:6443/api/v1/namespaces/a/configmaps/b: connect ECONNREFUSED 10.1.2.3:6443',
      { cause },
    );
    expect(publicErrorMessage(error)).toBe('no answer (ECONNREFUSED)');
  });

  it("says an apiserver refused the router's own request, not whom it refused", () => {
    const error = new ApiError(
      403,
      {
        code: 403,
        reason: 'Forbidden',
        message: 'configmaps "b" is forbidden: User "cellfed-components" cannot get resource "configmaps"',
      },
      'GET /api/v1/namespaces/a/configmaps/b',
    );
    expect(publicErrorMessage(error)).toBe('the apiserver answered 403');
  });

  it('takes every address out of anything else', () => {
    expect(publicErrorMessage(new Error('socket hang up on https://cell-2.cells.svc:6443/api'))).toBe(
      'socket hang up on <address>',
    );
  });
});

describe('withoutAddresses', () => {
  it.each([
    [
      'GET https://10.1.2.3:6443/api/v1/namespaces/a/configmaps/b: connect ECONNREFUSED 10.1.2.3:6443',
      'GET <address>: connect ECONNREFUSED <address>',
    ],
    ['connect ECONNREFUSED [fd00::1]:6443', 'connect ECONNREFUSED <address>'],
    ['connect ECONNREFUSED fd00::5:6443', 'connect ECONNREFUSED <address>'],
    ['getaddrinfo ENOTFOUND cell-2.internal', 'getaddrinfo ENOTFOUND <address>'],
    ['read cell-2.cells.svc:6443 timed out', 'read <address> timed out'],
    ['read cell-a:6443 timed out', 'read <address> timed out'],
    [
      "Hostname/IP does not match certificate's altnames: Host: cell-2.internal. is not in the cert's altnames: DNS:cell-9.internal",
      "Hostname/IP does not match certificate's altnames: Host: <address> is not in the cert's altnames: DNS:<address>",
    ],
    ['POST http://localhost:8080/x failed', 'POST <address> failed'],
    ['spec.containers[0].image is required', 'spec.containers[0].image is required'],
    [
      'configmaps "app" is moving from cell a to b; retry',
      'configmaps "app" is moving from cell a to b; retry',
    ],
  ])('%s', (text, redacted) => {
    expect(withoutAddresses(text)).toBe(redacted);
  });
});
