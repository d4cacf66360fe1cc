import { traceHeadersOf } from '@cellfed/controller-kit';
import type { Span } from '@opentelemetry/api';

import { refusal, type Impersonation, type Refusal } from '../routing/destination.ts';
import { badRequest, forbidden, tooManyRequests, unauthorized } from '../status/kube-status.ts';
import type { ClientRequest } from '../proxy/client-exchange.ts';
import type { AccessReviewer } from './access-reviewer.ts';
import type { Authenticator } from './authenticator.ts';
import { authorizeImpersonation, impersonationHeaders, requestedImpersonation } from './impersonation.ts';
import { unsafeIdentityField, type UserInfo } from './user-info.ts';

/**
 * Who a request acts as: the authenticated caller, whom it acts as (itself, or whom it may impersonate), and
 * the headers every request sent on for it carries (that impersonation, checked as kube-apiserver checks it,
 * the caller's address and the trace context); or why it may not.
 */
export type Admission =
  { user: UserInfo; effective: UserInfo; impersonation: Impersonation } | { refusal: Refusal };

/** kube-apiserver's words when its flow control turns a request away. */
export const TOO_MANY_REQUESTS = 'Too many requests, please try again later.';

/** Authenticates the caller and checks what it asks to impersonate (401, 400 and 403 Statuses otherwise). */
export async function admit(
  authenticator: Pick<Authenticator, 'authenticate'>,
  reviewer: Pick<AccessReviewer, 'allowed'>,
  request: ClientRequest,
  span: Span,
): Promise<Admission> {
  const authentication = await authenticator.authenticate(request);
  if ('failure' in authentication) return { refusal: refusal(unauthorized(), 'unauthenticated') };
  if ('busy' in authentication)
    return {
      refusal: {
        ...refusal(tooManyRequests(TOO_MANY_REQUESTS, 1), 'authentication-busy'),
        headers: { 'retry-after': '1' },
      },
    };
  const caller = authentication.user;
  // A name the router could not write into a header as it is (a certificate's CN, a token reviewer's
  // answer) is never acted on: it could smuggle headers into what the router sends as itself.
  if (unsafeIdentityField(caller)) return { refusal: refusal(unauthorized(), 'unsafe-identity') };
  const asked = requestedImpersonation(request.rawHeaders);
  let effective = caller;
  if (asked) {
    const decided = await authorizeImpersonation(reviewer, caller, asked);
    if ('invalid' in decided)
      return { refusal: refusal(badRequest(decided.invalid), 'impersonation-invalid') };
    if ('denied' in decided) return { refusal: refusal(forbidden(decided.denied), 'impersonation-denied') };
    effective = decided.user;
    const unsafe = unsafeIdentityField(effective);
    if (unsafe)
      return {
        refusal: refusal(
          badRequest(`the impersonated ${unsafe} holds a control character`),
          'impersonation-invalid',
        ),
      };
  }
  // Where the request came from, as kube-apiserver's audit log reads it: the router's peer, never what the
  // caller claims (proxy/headers.ts drops a caller's own X-Forwarded-For).
  const peer = request.socket?.remoteAddress;
  return {
    user: caller,
    effective,
    impersonation: {
      ...impersonationHeaders(effective),
      ...(peer ? { 'x-forwarded-for': peer } : {}),
      ...traceHeadersOf(span),
    },
  };
}
