import { COMPOSITE_VERSION_PREFIX } from '@cellfed/federation';

import type { RequestInfo } from './request-info.ts';

/**
 * Why a resource request's `resourceVersion` query cannot be served, or undefined when it can: an
 * apiserver's own version (an unsigned integer), or for a read the composite one the router gave out. Anything else kube-apiserver answers with a 500 (it fails to parse it); the router answers 400 with
 * its words. Other requests (discovery, `/version`) take no resourceVersion and are left alone.
 */
export function resourceVersionProblem(info: RequestInfo): string | undefined {
  if (!info.isResourceRequest) return undefined;
  const version = info.resourceVersion;
  if (!version || /^\d{1,20}$/.test(version)) return undefined;
  // A read (get, list, watch) may name a version the router gave out; the cell is asked at its own.
  const read = info.verb === 'get' || info.verb === 'list' || info.verb === 'watch';
  if (read && version.startsWith(COMPOSITE_VERSION_PREFIX)) return undefined;
  const why = version.startsWith(COMPOSITE_VERSION_PREFIX)
    ? "a list's resourceVersion; only reads take one"
    : 'not a resourceVersion an apiserver gave out';
  return `resourceVersion: Invalid value: ${JSON.stringify(version.slice(0, 100))}: ${why}`;
}
