import type { GroupVersionResource } from '@cellfed/api';
import { isConflict, isNotFound, type KubeClient } from '@cellfed/controller-kit';
import { APPLY_PATCH, resourcePath, type ResourceRef, type KubeObject } from '@cellfed/federation';

import { MIRROR_FIELD_MANAGER, contentHash } from '../mirror-marks.ts';
import type { RebalancePlan } from '../rebalance-plan.ts';
import { mirroredResources, sameResource } from '../mirror/shared-objects.ts';

/*
 * The writes of the controllers that keep one copy of a control-plane object in a cell (autoscalers,
 * claims): apply the copy, delete it, and show its status on the control-plane object.
 */

type Client = Pick<KubeClient, 'request'>;

/** Whether the CellSet itself places `resource` (cellular or mirrored): then there is no copy to keep. */
export function placedByCellSet(plan: RebalancePlan, resource: GroupVersionResource): boolean {
  const placed = [...plan.spec.cellularResources, ...mirroredResources(plan.spec)];
  return placed.some((listed) => sameResource(listed, resource));
}

/** Server-side applies `copy` in a cell as the mirror's field manager; answers it as the cell has it. */
export function applyCopy<T extends KubeObject>(
  cell: Client,
  resource: ResourceRef,
  copy: T,
  signal: AbortSignal,
): Promise<T> {
  const { namespace = '', name = '' } = copy.metadata;
  return cell.request<T>('PATCH', resourcePath(resource, namespace, name), {
    body: copy,
    contentType: APPLY_PATCH,
    query: { fieldManager: MIRROR_FIELD_MANAGER, force: true },
    signal,
  });
}

/** Deletes a copy if it is still the one read (its uid); answers whether it did. */
export async function removeCopy(
  cell: Client,
  resource: ResourceRef,
  existing: KubeObject,
  signal: AbortSignal,
): Promise<boolean> {
  const { namespace = '', name = '' } = existing.metadata;
  try {
    await cell.request('DELETE', resourcePath(resource, namespace, name), {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: existing.metadata.uid } },
      signal,
    });
    return true;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    return false;
  }
}

/**
 * Writes `status` onto the control-plane object (as its cache has it) unless it shows that already; answers
 * whether it wrote. An object changed since the cache saw it is not written: its own event queues it again.
 */
export async function writeShownStatus(
  controlPlane: Client,
  resource: ResourceRef,
  object: KubeObject & { status?: unknown },
  status: unknown,
): Promise<boolean> {
  if (contentHash(status) === contentHash(object.status ?? {})) return false;
  const { namespace = '', name = '' } = object.metadata;
  try {
    await controlPlane.request('PUT', `${resourcePath(resource, namespace, name)}/status`, {
      body: { ...structuredClone(object), status },
    });
    return true;
  } catch (error) {
    if (!isConflict(error)) throw error;
    return false;
  }
}
