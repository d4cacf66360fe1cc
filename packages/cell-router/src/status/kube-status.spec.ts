import { failure, requestEntityTooLarge, tooManyRequests, unauthorized } from './kube-status.ts';

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
