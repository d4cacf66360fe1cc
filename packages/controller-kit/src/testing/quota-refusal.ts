import { ApiError } from '../kube/api-error.ts';

/**
 * A create of a Deployment `name` refused by the quota `quota` (each count at 1), in kube-apiserver's words:
 * what a cell's quota admission answers a write past its share.
 */
export function quotaRefusal(quota = 'team', name = 'web'): ApiError {
  return new ApiError(
    403,
    {
      code: 403,
      reason: 'Forbidden',
      message: `deployments.apps "${name}" is forbidden: exceeded quota: ${quota}, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1`,
    },
    'POST',
  );
}
