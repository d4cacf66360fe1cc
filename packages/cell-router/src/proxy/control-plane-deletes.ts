import { ORPHAN_FINALIZER, ORPHANED_DEPENDENTS_REASON } from '@cellfed/api';
import type { EventRecorder, KubeClient } from '@cellfed/controller-kit';

import type { Authorize } from '../auth/request-authorization.ts';
import { publicErrorMessage } from '../status/public-error.ts';
import type { ResourceRequestInfo } from '../request/request-info.ts';
import { requestObjectPath } from '../request/object-path.ts';
import { serviceUnavailable } from '../status/kube-status.ts';
import { refusal, type Refusal } from '../routing/destination.ts';
import { hasRequestBody } from './client-exchange.ts';
import { type BufferedBody } from './forward.ts';
import { heldDependentsFinalizer } from './held-dependents-deletes.ts';
import { type ClientRequest } from '../server/client-request.ts';
import type { RequestBody } from '../server/request-body.ts';
import { type Impersonation } from '../auth/impersonation.ts';

/** Records that a control-plane object is deleted with orphan propagation (an events.k8s.io Event). */
export type OrphaningRecorder = Pick<EventRecorder, 'write'>;

const NOTE =
  "deleted with orphan propagation: cellfed's collector removes the reference to it from the objects in the cells that name it as their owner, and deletes none of them";

/**
 * A DELETE of one control-plane object, made ready to forward: with orphan propagation (the query or the
 * DeleteOptions body), the orphaning is recorded first (see controller-kit's orphaned-owners.ts), so that
 * cellfed's collector removes the reference from the object's held dependents in the cells instead of
 * deleting them once it finds the object gone. Answers the body read (to forward as it was), or a refusal
 * when the record could not be written: the delete is not sent, and the caller retries.
 *
 * The object is read as the caller, for its kind and uid, and the record written only once the caller is
 * known to be allowed the delete. A caller who may delete but not read it gets its delete without the
 * record; a delete of an object that is not there answers for itself.
 */
export async function readyControlPlaneDelete(
  options: { controlPlane: KubeClient; recorder: OrphaningRecorder; maxBodyBytes: number },
  info: ResourceRequestInfo,
  request: ClientRequest,
  readBody: RequestBody['read'],
  impersonation: Impersonation,
  authorize: Authorize,
  signal: AbortSignal,
): Promise<{ body: BufferedBody | undefined } | Refusal> {
  const read = hasRequestBody(request) ? await readBody(options.maxBodyBytes) : undefined;
  if (read && !Buffer.isBuffer(read)) return read;
  const bytes = read;
  const body = bytes ? { bytes } : undefined;
  if (heldDependentsFinalizer(request.url ?? '/', bytes) !== ORPHAN_FINALIZER) return { body };
  const answer = await options.controlPlane.raw('GET', requestObjectPath(info, info.namespace, info.name), {
    headers: { ...impersonation, accept: 'application/json' },
    signal,
  });
  if (answer.statusCode !== 200) {
    await answer.body.dump();
    return { body };
  }
  const object = (await answer.body.json()) as {
    apiVersion?: string;
    kind?: string;
    metadata?: { uid?: string };
  };
  const uid = object.metadata?.uid;
  if (!uid || !object.kind || !object.apiVersion) return { body };
  // The record is the router's word: written only for a caller the control plane lets delete the object.
  // Any other delete is sent on without it, and the control plane refuses it.
  if (await authorize()) return { body };
  try {
    await options.recorder.write(
      {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: info.name,
        ...(info.namespace ? { namespace: info.namespace } : {}),
        uid,
      },
      'Normal',
      ORPHANED_DEPENDENTS_REASON,
      NOTE,
    );
  } catch (error) {
    return refusal(
      serviceUnavailable(
        `the orphaning of ${info.resource} ${info.name} could not be recorded for cellfed's collector (${publicErrorMessage(error)}); retry`,
        1,
      ),
      'orphan-record',
      'control-plane',
    );
  }
  return { body };
}
