import {
  QUOTA_CHANGED_AT_ANNOTATION,
  QUOTA_DRAWN_AT_ANNOTATION,
  QUOTA_SHARE_ANNOTATION,
  QUOTA_SHARE_LABEL,
} from '@cellfed/api';
import { RESOURCE_QUOTAS, resourcePath, type KubeList, type KubeObject } from '@cellfed/federation';

import { isConflict } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import {
  formatResourceList,
  parseResourceList,
  sameResourceList,
  type ResourceList,
} from '@cellfed/federation';
import type { Amounts } from '@cellfed/federation';

type Client = Pick<KubeClient, 'request'>;

export interface ResourceQuota extends KubeObject {
  spec?: { hard?: ResourceList; scopes?: string[]; scopeSelector?: unknown };
  status?: { hard?: ResourceList; used?: ResourceList };
}

/** The selector of the quota copies cellfed keeps in cells (and of nothing else). */
export const QUOTA_COPY_SELECTOR = `${QUOTA_SHARE_LABEL}=true`;

/** The share a cell's quota copy records; undefined without one (not a copy, or a corrupt annotation). */
export function shareOf(copy: Readonly<ResourceQuota> | undefined): Amounts | undefined {
  const text = copy?.metadata.annotations?.[QUOTA_SHARE_ANNOTATION];
  if (!text) return undefined;
  try {
    return parseResourceList(JSON.parse(text) as ResourceList);
  } catch {
    return undefined;
  }
}

/** When a share was last drawn from the copy (ms), if ever. */
export function drawnAtOf(copy: Readonly<ResourceQuota> | undefined): number | undefined {
  return timeOf(copy, QUOTA_DRAWN_AT_ANNOTATION);
}

/** When the copy's share last changed (ms), if ever. */
export function changedAtOf(copy: Readonly<ResourceQuota> | undefined): number | undefined {
  return timeOf(copy, QUOTA_CHANGED_AT_ANNOTATION);
}

function timeOf(copy: Readonly<ResourceQuota> | undefined, annotation: string): number | undefined {
  const text = copy?.metadata.annotations?.[annotation];
  const at = text ? Date.parse(text) : NaN;
  return Number.isNaN(at) ? undefined : at;
}

/** What a copy's share and limits become: the copy's own hard limits are its share plus its overhead. */
export interface ShareChange {
  readonly share: Amounts;
  readonly hard: Amounts;
  /** When the change is made. */
  readonly at: Date;
  /** Set when the change draws from this copy for another cell. */
  readonly drawnAt?: Date;
}

/** The copy with its share and limits changed (not written). */
export function withShare(copy: ResourceQuota, change: ShareChange): ResourceQuota {
  const like = copy.spec?.hard ?? {};
  return {
    ...copy,
    metadata: {
      ...copy.metadata,
      labels: { ...copy.metadata.labels, [QUOTA_SHARE_LABEL]: 'true' },
      annotations: {
        ...copy.metadata.annotations,
        [QUOTA_SHARE_ANNOTATION]: JSON.stringify(formatResourceList(change.share, like)),
        [QUOTA_CHANGED_AT_ANNOTATION]: change.at.toISOString(),
        ...(change.drawnAt ? { [QUOTA_DRAWN_AT_ANNOTATION]: change.drawnAt.toISOString() } : {}),
      },
    },
    spec: { ...copy.spec, hard: formatResourceList(change.hard, like) },
  };
}

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

/** The limits a copy's status should hold now (see {@link enforce}). */
export function enforcedLimits(copy: ResourceQuota): ResourceList {
  const spec = copy.spec?.hard ?? {};
  const used = copy.status?.used;
  if (!used) return spec;
  const known = new Set([...Object.keys(used), ...Object.keys(copy.status?.hard ?? {})]);
  return Object.fromEntries(Object.entries(spec).filter(([resource]) => known.has(resource)));
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
