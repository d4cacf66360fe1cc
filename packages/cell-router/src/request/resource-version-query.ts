import type { RequestInfo } from './request-info.ts';

/** A list's or watch's resourceVersion through the router (collections/cell-versions.ts). */
const COMPOSITE_PREFIX = 'cf1.';

/**
 * Why a resource request's `resourceVersion` query cannot be served, or undefined when it can: an
 * apiserver's own version (an unsigned integer), or for a list or watch the composite one the router gave
 * out. Anything else kube-apiserver answers with a 500 (it fails to parse it); the router answers 400 with
 * its words. Other requests (discovery, `/version`) take no resourceVersion and are left alone.
 */
export function resourceVersionProblem(info: RequestInfo): string | undefined {
  if (!info.isResourceRequest) return undefined;
  const version = info.resourceVersion;
  if (!version || /^\d{1,20}$/.test(version)) return undefined;
  const collection = info.verb === 'list' || info.verb === 'watch';
  if (collection && version.startsWith(COMPOSITE_PREFIX)) return undefined;
  const why = version.startsWith(COMPOSITE_PREFIX)
    ? "a list's resourceVersion; one object is read at its own, or without one"
    : 'not a resourceVersion an apiserver gave out';
  return `resourceVersion: Invalid value: ${JSON.stringify(version.slice(0, 100))}: ${why}`;
}
