import { ApiError, errorMessage, selfUserName, type KubeClient } from '@cellfed/controller-kit';
import { fencePolicyObjects, fenceProbe, isFenceRefusal, marksPolicyObjects } from '@cellfed/federation';

import { applyIfChanged } from './apply-if-changed.ts';
import { RebalanceError, RebalanceErrorCode } from '../errors.ts';

type Client = Pick<KubeClient, 'request'>;

const POLICIES = '/apis/admissionregistration.k8s.io/v1';

/**
 * Puts the write fence policy in a cell (see `FENCE_POLICY_NAME`), and the policy that keeps cellfed's marks
 * cellfed's (see `MARKS_POLICY_NAME`): the fence exempting the controllers' user names there, the marks
 * policy every component's (the controller's own, see {@link ownUserName}, and the others it is told), and
 * proves the cell enforces the fence: a dry-run create of the probe must be refused by it. Until then no object may leave the cell, so this is part of the mirror pass the gate waits for.
 * Answers the number of writes.
 */
export async function ensureCellFence(
  cell: Client,
  users: { readonly controllers: readonly string[]; readonly components: readonly string[] },
  signal: AbortSignal,
): Promise<number> {
  // Only the controllers write fenced copies (moves, promotions, purges); the router's own writes (a
  // namespace, a quota share, a backup's mark) never touch one, so it is not exempt from the fence.
  const [policy, binding] = fencePolicyObjects(users.controllers);
  const [marksPolicy, marksBinding] = marksPolicyObjects(users.components);
  let writes = 0;
  for (const [object, resource] of [
    [policy, 'validatingadmissionpolicies'],
    [binding, 'validatingadmissionpolicybindings'],
    [marksPolicy, 'validatingadmissionpolicies'],
    [marksBinding, 'validatingadmissionpolicybindings'],
  ] as const) {
    const path = `${POLICIES}/${resource}/${object.metadata.name ?? ''}`;
    // The marks policy's annotation (the names it exempts, which the router reads) is content too.
    const content = object.metadata.annotations
      ? { spec: object['spec'], annotations: object.metadata.annotations }
      : object['spec'];
    if (await applyIfChanged(cell, path, object, content, signal)) writes++;
  }
  await proveInForce(cell, signal);
  return writes;
}

/** The user name the cell knows the controller by (a SelfSubjectReview: any authenticated user may ask). */
export async function ownUserName(cell: Client, signal: AbortSignal): Promise<string> {
  const user = await selfUserName(cell, signal);
  if (!user)
    throw new RebalanceError(
      RebalanceErrorCode.FenceNotInForce,
      'the cell did not say who the controller is (SelfSubjectReview without a user)',
    );
  return user;
}

async function proveInForce(cell: Client, signal: AbortSignal): Promise<void> {
  try {
    await cell.request('POST', '/api/v1/namespaces', {
      body: JSON.stringify(fenceProbe()),
      query: { dryRun: 'All' },
      signal,
    });
  } catch (error) {
    if (error instanceof ApiError && isFenceRefusal(error.status.message ?? '')) return;
    throw new RebalanceError(
      RebalanceErrorCode.FenceNotInForce,
      `the write fence probe failed: ${errorMessage(error)}`,
      { cause: error },
    );
  }
  // Applied, but the apiserver's admission has not loaded it yet (it follows policies with an informer).
  throw new RebalanceError(
    RebalanceErrorCode.FenceNotInForce,
    'the write fence policy is applied but the cell does not enforce it yet',
  );
}
