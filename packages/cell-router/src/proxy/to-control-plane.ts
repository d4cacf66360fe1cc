import type { KubeClient } from '@cellfed/controller-kit';

import type { RequestOutcome } from '../tracing/request-span.ts';
import type { ClientRequest, ClientResponse } from './client-exchange.ts';
import type { Impersonation } from '../routing/destination.ts';
import { relay, sendUpstream, type BufferedBody } from './forward.ts';

/** Sends the request on to the control plane as the caller (its body as read, when it was) and relays it. */
export async function toControlPlane(
  controlPlane: KubeClient,
  reason: string,
  request: ClientRequest,
  response: ClientResponse,
  impersonation: Impersonation,
  signal: AbortSignal,
  body?: BufferedBody,
): Promise<RequestOutcome> {
  const upstream = await sendUpstream(controlPlane, request, impersonation, signal, body);
  await relay(upstream, response);
  return { code: upstream.statusCode, cell: 'control-plane', route: reason };
}
