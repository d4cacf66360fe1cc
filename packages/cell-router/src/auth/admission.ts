import { traceHeadersOf, type KubeClient } from '@cellfed/controller-kit';
import type { Span } from '@opentelemetry/api';

import { refusal, type Impersonation, type Refusal } from '../routing/destination.ts';
import { forbidden, unauthorized } from '../status/kube-status.ts';
import type { ClientRequest } from '../proxy/client-exchange.ts';
import type { Authenticator } from './authenticator.ts';
import { authorizeImpersonation, impersonationHeaders, requestedImpersonation } from './impersonation.ts';
import type { UserInfo } from './user-info.ts';

/**
 * Who a request acts as: the authenticated caller, and the headers every request sent on for it carries
 * (whom it impersonates, checked as kube-apiserver checks it, and the trace context); or why it may not.
 */
export type Admission = { user: UserInfo; impersonation: Impersonation } | { refusal: Refusal };

/** Authenticates the caller and checks what it asks to impersonate (401 and 403 Statuses otherwise). */
export async function admit(
  authenticator: Pick<Authenticator, 'authenticate'>,
  controlPlane: KubeClient,
  request: ClientRequest,
  span: Span,
): Promise<Admission> {
  const authentication = await authenticator.authenticate(request);
  if ('failure' in authentication) return { refusal: refusal(unauthorized(), 'unauthenticated') };
  const caller = authentication.user;
  const asked = requestedImpersonation(request.headers);
  let effective = caller;
  if (asked) {
    const decided = await authorizeImpersonation(controlPlane, caller, asked);
    if ('denied' in decided) return { refusal: refusal(forbidden(decided.denied), 'impersonation-denied') };
    effective = decided.user;
  }
  return { user: caller, impersonation: { ...impersonationHeaders(effective), ...traceHeadersOf(span) } };
}
