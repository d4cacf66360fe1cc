import type { KubeClient } from '@cellfed/controller-kit';

import type { RequestOutcome } from '../tracing/request-span.ts';
import type { ClientRequest, ClientResponse } from './client-exchange.ts';
import type { Impersonation } from '../routing/destination.ts';
import { relay, sendStatus, sendUpstream, type BufferedBody } from './forward.ts';
import { cellVersionTarget } from './version-translation.ts';
import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';

/**
 * Sends the request on to the control plane as the caller (its body as read, when it was) and relays it.
 * `ownObjectRead`: a GET of what the control plane makes for itself outside its system namespaces
 * (`kube-root-ca.crt`, `default/kubernetes`), which lists and watches of the cells' resources show beside the
 * cells' objects: its version is shown, and read, as theirs are (views/shown-version.ts).
 */
export async function toControlPlane(
  controlPlane: KubeClient,
  reason: string,
  request: ClientRequest,
  response: ClientResponse,
  impersonation: Impersonation,
  signal: AbortSignal,
  body?: BufferedBody,
  ownObjectRead = false,
): Promise<RequestOutcome> {
  const target = ownObjectRead ? cellVersionTarget(request.url ?? '/', CONTROL_PLANE_SOURCE) : undefined;
  if (target && 'status' in target) {
    sendStatus(response, target.status);
    return { code: target.status.code, cell: 'control-plane', route: reason };
  }
  const upstream = await sendUpstream(controlPlane, request, impersonation, signal, body, target?.target);
  await relay(upstream, response, false, undefined, ownObjectRead ? CONTROL_PLANE_SOURCE : undefined);
  return { code: upstream.statusCode, cell: 'control-plane', route: reason };
}
