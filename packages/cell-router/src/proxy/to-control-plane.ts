import type { KubeClient } from '@cellfed/controller-kit';

import { hasRequestBody } from './client-exchange.ts';
import { relay, sendStatus, sendUpstream, type BufferedBody } from './forward.ts';
import { cellVersionBody, cellVersionTarget } from './version-translation.ts';
import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { SHOWN_ANSWER } from './send-refusal.ts';
import { type KubeStatus } from '../status/kube-status.ts';
import { type RequestOutcome } from '../server/request-outcome.ts';
import type { RequestScope } from '../server/request-scope.ts';

/**
 * What the control plane makes for itself of a resource that lives in cells (`kube-root-ca.crt`,
 * `default/kubernetes`, a system namespace's objects): lists and watches show it beside the cells' objects,
 * so one object of it, read or written, carries and takes its version as theirs do (views/shown-version.ts).
 */
export interface OwnObjectRequest {
  readonly maxBodyBytes: number;
}

/**
 * Sends the request on to the control plane as the caller (its body as read, when it was) and relays it;
 * `ownObject`: one object the control plane makes for itself (see {@link OwnObjectRequest}).
 */
export async function toControlPlane(
  controlPlane: KubeClient,
  reason: string,
  scope: Pick<RequestScope, 'request' | 'response' | 'impersonation' | 'signal' | 'body'>,
  body?: BufferedBody,
  ownObject?: OwnObjectRequest,
): Promise<RequestOutcome> {
  const { request, response, impersonation, signal } = scope;
  const refuse = (status: KubeStatus): RequestOutcome => {
    sendStatus(response, status);
    return { code: status.code, cell: 'control-plane', route: reason };
  };
  let target: string | undefined;
  if (ownObject) {
    const translated = cellVersionTarget(request.url ?? '/', CONTROL_PLANE_SOURCE);
    if (translated && 'status' in translated) return refuse(translated.status);
    target = translated?.target;
    if (!body && request.method !== 'GET' && hasRequestBody(request)) {
      const bytes = await scope.body.read(ownObject.maxBodyBytes);
      if (!Buffer.isBuffer(bytes)) {
        sendStatus(response, bytes.status, bytes.headers);
        return { code: bytes.status.code, cell: 'control-plane', route: bytes.route };
      }
      body = { bytes };
    }
    if (body) {
      const own = cellVersionBody(request.headers['content-type'], body.bytes, CONTROL_PLANE_SOURCE);
      if (own && 'status' in own) return refuse(own.status);
      if (own) body = { ...body, bytes: own.body };
    }
  }
  // An answer the router edits comes uncompressed.
  const headers = ownObject ? { ...impersonation, ...SHOWN_ANSWER } : impersonation;
  const upstream = await sendUpstream(controlPlane, request, headers, signal, body, target);
  await relay(upstream, response, false, undefined, ownObject ? CONTROL_PLANE_SOURCE : undefined);
  return { code: upstream.statusCode, cell: 'control-plane', route: reason };
}
