import {
  QUOTA_COPY_SELECTOR,
  RESOURCE_QUOTAS,
  enforcedLimits,
  resourcePath,
  sameResourceList,
  withShare,
  type KubeList,
  type ResourceQuota,
  type ShareChange,
} from '@cellfed/federation';

import { isConflict } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/kube-client.ts';

type Client = Pick<KubeClient, 'request'>;

/**
 * Writes a copy's new share and puts its limits in force at once (see {@link putShare} and {@link enforce}).
 * A lowered limit is in force once this returns: every admission after it re-reads the quota, since its own
 * status write would conflict. So a draw gives only what it has taken.
 */
export async function writeShare(
  client: Client,
  copy: ResourceQuota,
  change: ShareChange,
): Promise<ResourceQuota> {
  return enforce(client, await putShare(client, copy, change));
}

/** Writes a copy's new share and limits; its `resourceVersion` is the precondition (a conflict throws). */
export async function putShare(
  client: Client,
  copy: ResourceQuota,
  change: ShareChange,
): Promise<ResourceQuota> {
  const { namespace = '', name = '' } = copy.metadata;
  return client.request<ResourceQuota>('PUT', resourcePath(RESOURCE_QUOTAS, namespace, name), {
    body: withShare(copy, change),
  });
}

/**
 * Makes `status.hard` the copy's `spec.hard`, keeping `status.used` as its cell counted it: a cell's quota
 * admission checks `status.hard`, which the cell's own quota controller copies from `spec.hard` only some
 * time later. A name the cell has not counted yet is left out, as one apiserver leaves a name just added to
 * a quota unchecked until its quota controller counts it (a limit with no count refuses every write) —
 * except on a copy counted not at all yet: it refuses what it limits until counted, so that a cell joining
 * with a copy admits nothing its share has not been counted for.
 */
export async function enforce(client: Client, copy: ResourceQuota): Promise<ResourceQuota> {
  const { namespace = '', name = '' } = copy.metadata;
  const path = resourcePath(RESOURCE_QUOTAS, namespace, name);
  let current = copy;
  for (let attempt = 0; ; attempt++) {
    const hard = enforcedLimits(current);
    if (sameResourceList(current.status?.hard, hard)) return current;
    try {
      return await client.request<ResourceQuota>('PUT', `${path}/status`, {
        body: { ...current, status: { ...current.status, hard } },
      });
    } catch (error) {
      // The cell's quota controller or an admission wrote the status meanwhile: read it and look again.
      if (!isConflict(error) || attempt >= 4) throw error;
      current = await client.request<ResourceQuota>('GET', path);
    }
  }
}

/** Every quota copy in a namespace of a cell. */
export async function listQuotaCopies(client: Client, namespace: string): Promise<ResourceQuota[]> {
  const list = await client.request<KubeList<ResourceQuota>>(
    'GET',
    resourcePath(RESOURCE_QUOTAS, namespace),
    {
      query: { labelSelector: QUOTA_COPY_SELECTOR },
    },
  );
  return list.items;
}
