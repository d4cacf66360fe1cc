import {
  failure,
  internalError,
  requestEntityTooLarge,
  tooManyRequests,
  unauthorized,
  withoutAddresses,
} from './kube-status.ts';

describe('Kubernetes Status', () => {
  it('is a v1 Status with code and reason', () => {
    expect(unauthorized()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });
  });

  it('tells a fenced writer when to retry', () => {
    expect(tooManyRequests('team/web is migrating between cells', 1, 'web')).toMatchObject({
      code: 429,
      reason: 'TooManyRequests',
      details: { name: 'web', retryAfterSeconds: 1 },
    });
  });

  it('names the body limit', () => {
    expect(requestEntityTooLarge(3 * 1024 * 1024)).toMatchObject({
      code: 413,
      message: expect.stringContaining('3145728'),
    });
    expect(failure(400, 'BadRequest', 'x')).not.toHaveProperty('details');
  });
});

describe('withoutAddresses', () => {
  it.each([
    [
      'GET https://10.1.2.3:6443/api/v1/namespaces/a/configmaps/b: connect ECONNREFUSED 10.1.2.3:6443',
      'GET <address>: connect ECONNREFUSED <address>',
    ],
    ['connect ECONNREFUSED [fd00::1]:6443', 'connect ECONNREFUSED <address>'],
    ['getaddrinfo ENOTFOUND cell-2.internal', 'getaddrinfo ENOTFOUND <address>'],
    ['read cell-2.cells.svc:6443 timed out', 'read <address> timed out'],
    ['POST http://localhost:8080/x failed', 'POST <address> failed'],
    [
      'configmaps "app" is moving from cell a to b; retry',
      'configmaps "app" is moving from cell a to b; retry',
    ],
  ])('%s', (text, redacted) => {
    expect(withoutAddresses(text)).toBe(redacted);
  });

  it('applies to every Status the router makes', () => {
    expect(internalError('GET https://10.0.0.9:6443/x: socket hang up').message).toBe(
      'GET <address>: socket hang up',
    );
  });
});
