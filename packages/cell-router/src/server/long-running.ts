import type { RequestInfo } from '../request/request-info.ts';
import type { ClientRequest } from './client-request.ts';

/** The subresources kube-apiserver counts as long-running, whatever their parameters (its `longRunningSubresources`). */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'log', 'portforward', 'proxy']);

/**
 * Whether a request may stay open for as long as the caller wants, as kube-apiserver's long-running check
 * tells it: an upgrade, a watch or proxy verb, or one of {@link LONG_RUNNING_SUBRESOURCES} (a log, followed or
 * not).
 */
export function isLongRunning(request: Pick<ClientRequest, 'headers'>, info: RequestInfo): boolean {
  if (request.headers.upgrade !== undefined) return true;
  if (!info.isResourceRequest) return false;
  return (
    info.verb === 'watch' ||
    info.verb === 'proxy' ||
    (info.subresource !== undefined && LONG_RUNNING_SUBRESOURCES.has(info.subresource))
  );
}
