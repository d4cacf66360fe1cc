import {
  ApiError,
  errorMessage,
  fencePolicyObjects,
  fenceProbe,
  isFenceRefusal,
  isNotFound,
  type KubeClient,
  type KubeObject,
} from '@cellfed/controller-kit';

import { RebalanceError, RebalanceErrorCode } from './errors.ts';
import { contentHash, MIRROR_FIELD_MANAGER, MIRROR_HASH_ANNOTATION } from './mirror-marks.ts';

type Client = Pick<KubeClient, 'request'>;

const POLICIES = '/apis/admissionregistration.k8s.io/v1';
const METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const APPLY = 'application/apply-patch+yaml';

/**
 * Puts the write fence policy in a cell (see `FENCE_POLICY_NAME`), exempting the controller's own user
 * name there, and proves the cell enforces it: a dry-run create of the probe must be refused by it. Until
 * then no object may leave the cell, so this is part of the mirror pass the gate waits for. Answers the
 * number of writes.
 */
export async function ensureCellFence(cell: Client, signal: AbortSignal): Promise<number> {
  const user = await ownUserName(cell, signal);
  let writes = 0;
  for (const object of fencePolicyObjects(user)) {
    const hash = contentHash(object.spec);
    const path = `${POLICIES}/${object.kind === 'ValidatingAdmissionPolicy' ? 'validatingadmissionpolicies' : 'validatingadmissionpolicybindings'}/${object.metadata.name ?? ''}`;
    const current = await cell
      .request<KubeObject>('GET', path, { accept: METADATA, signal })
      .catch((error: unknown) => {
        if (isNotFound(error)) return undefined;
        throw error;
      });
    if (current?.metadata.annotations?.[MIRROR_HASH_ANNOTATION] === hash) continue;
    const annotations = { ...object.metadata.annotations, [MIRROR_HASH_ANNOTATION]: hash };
    await cell.request('PATCH', path, {
      body: JSON.stringify({ ...object, metadata: { ...object.metadata, annotations } }),
      contentType: APPLY,
      query: { fieldManager: MIRROR_FIELD_MANAGER, force: true },
      signal,
    });
    writes++;
  }
  await proveInForce(cell, signal);
  return writes;
}

/** The user name the cell knows the controller by (a SelfSubjectReview: any authenticated user may ask). */
async function ownUserName(cell: Client, signal: AbortSignal): Promise<string> {
  const review = await cell.request<{ status?: { userInfo?: { username?: string } } }>(
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    {
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      signal,
    },
  );
  const user = review.status?.userInfo?.username;
  if (!user) throw new Error('the cell did not say who the controller is (SelfSubjectReview without a user)');
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
