/**
 * @cellfed/cell-router — the Kubernetes API front door of a cellfed federation. Requests are parsed
 * (request-info), planned without I/O (route-plan), then carried out by the proxy.
 * @packageDocumentation
 */
export { parseRequestInfo } from './request/request-info.ts';
export type {
  NonResourceRequestInfo,
  RequestInfo,
  ResourceRequestInfo,
  ResourceVerb,
} from './request/request-info.ts';
export { BodyNameError, namesFromBody, withName } from './request/object-name.ts';
export type { BodyNames } from './request/object-name.ts';
export { generateName } from './request/generate-name.ts';
export { CellularResources } from './routing/cellular-resources.ts';
export { planRoute, routingState } from './routing/route-plan.ts';
export type { NamespaceLabels, RoutePlan, RoutingState } from './routing/route-plan.ts';
export * as status from './status/kube-status.ts';
export type { KubeStatus } from './status/kube-status.ts';
export { Router } from './server/router.ts';
export type { RouterOptions } from './server/router.ts';
export { RouterHandler } from './proxy/router-handler.ts';
export { MAX_BODY_BYTES } from './proxy/forward.ts';
export { RouterMetrics } from './metrics/router-metrics.ts';
export { Authenticator } from './auth/authenticator.ts';
export type { UserInfo } from './auth/user-info.ts';
