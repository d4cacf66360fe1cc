import {
  QUOTA_CHANGED_AT_ANNOTATION,
  QUOTA_DRAWN_AT_ANNOTATION,
  QUOTA_SHARE_ANNOTATION,
  QUOTA_SHARE_LABEL,
} from '@cellfed/api';

import type { KubeObject } from './kube-object.ts';
import { formatResourceList, parseResourceList, type ResourceList } from './quantity.ts';
import type { Amounts } from './quota-shares.ts';

/*
 * What a cell's copy of a control-plane ResourceQuota records of the federation's division: its share, when
 * it last changed and was drawn from, and the limits in force. Controller-kit's quota/ reads and writes the
 * copies; the router and the rebalance controller share this reading of them.
 */

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

/** The limits a copy's status should hold now (see {@link enforce}). */
export function enforcedLimits(copy: ResourceQuota): ResourceList {
  const spec = copy.spec?.hard ?? {};
  const used = copy.status?.used;
  if (!used) return spec;
  const known = new Set([...Object.keys(used), ...Object.keys(copy.status?.hard ?? {})]);
  return Object.fromEntries(Object.entries(spec).filter(([resource]) => known.has(resource)));
}
