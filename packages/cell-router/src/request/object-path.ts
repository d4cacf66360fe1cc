import { resourcePath } from '@cellfed/federation';

import type { ResourceRequestInfo } from './request-info.ts';

/** The path of object `namespace/name` of the request's resource (its group and version), without subresource. */
export function requestObjectPath(info: ResourceRequestInfo, namespace: string, name: string): string {
  return resourcePath(
    { group: info.apiGroup, version: info.apiVersion, resource: info.resource, namespaced: namespace !== '' },
    namespace,
    name,
  );
}
