import { traceHeadersOf } from '@cellfed/controller-kit';
import type { Span } from '@opentelemetry/api';

import { RETRY_SOON, refusal, type Refusal } from '../routing/destination.ts';
import {
  badRequest,
  forbidden,
  serviceUnavailable,
  tooManyRequests,
  unauthorized,
} from '../status/kube-status.ts';
import { publicErrorMessage } from '../status/public-error.ts';
import { AccessReviewsBusy, type AccessReviewer } from './access-reviewer.ts';
import type { Authenticator } from './authenticator.ts';
import type { ComponentUsers } from './component-users.ts';
import { authorizeImpersonation, impersonationHeaders, requestedImpersonation } from './impersonation.ts';
import { unsafeIdentityField, type UserInfo } from './user-info.ts';
import { type ClientRequest } from '../server/client-request.ts';
import { type Impersonation } from './impersonation.ts';

/**
 * Whom a request acts as: the authenticated caller, whom it acts as (itself, or whom it may impersonate), and
 * the headers every request sent on for it carries (that impersonation, checked as kube-apiserver checks it,
 * the caller's address and the trace context); or why it may not.
 */
export type Admission =
  { user: UserInfo; effective: UserInfo; impersonation: Impersonation } | { refusal: Refusal };

const NO_COMPONENT_USERS: Pick<ComponentUsers, 'has'> = new Set<string>();

/** kube-apiserver's words when its flow control turns a request away. */
const TOO_MANY_REQUESTS = 'Too many requests, please try again later.';

/** A refusal the caller retries by itself after a second: flow control's 429. */
export const tooManyRefusal = (route: string): Refusal => ({
  ...refusal(tooManyRequests(TOO_MANY_REQUESTS, 1), route),
  headers: RETRY_SOON,
});

/**
 * Who the caller is (401 if nobody; 429 or 503 with Retry-After when that cannot be told now). A name the
 * router could not write into a header as it is (a certificate's CN, a token reviewer's answer holding a
 * control character, or a space at either end) is never acted on: it could smuggle headers into what the
 * router sends as itself, or reach a cell as another name than the control plane knows.
 */
export async function authenticateCaller(
  authenticator: Pick<Authenticator, 'authenticate'>,
  request: ClientRequest,
): Promise<{ user: UserInfo } | { refusal: Refusal }> {
  const authentication = await authenticator.authenticate(request);
  if ('busy' in authentication) return { refusal: tooManyRefusal('authentication-busy') };
  if ('unavailable' in authentication)
    return {
      refusal: {
        ...refusal(
          serviceUnavailable('the router could not check the credential; retry', 1),
          'authentication-unavailable',
        ),
        headers: RETRY_SOON,
      },
    };
  if ('failure' in authentication || unsafeIdentityField(authentication.user))
    return { refusal: refusal(unauthorized(), 'unauthenticated') };
  return { user: authentication.user };
}

/**
 * The 403 for a request that would reach the cells as one of cellfed's components: the cells exempt those
 * names from the reserved-marks policy and the mirrored admission policies and webhooks (the controllers'
 * from the write fence too), so no caller may be known there by one (docs/security.md).
 */
function componentNameRefusal(username: string): Refusal {
  return refusal(
    forbidden(
      `forbidden: User "${username}" is a name cellfed's components call the cells as; the cell router serves no request as it`,
    ),
    'component-name',
  );
}

/**
 * Whom an authenticated caller's request acts as: itself, or whom it asks to impersonate if the control
 * plane allows it every permission kube-apiserver checks (400 and 403 Statuses otherwise; 429 or 503 when the
 * control plane cannot be asked now). Never one of `componentUsers`, the names cellfed's components call the
 * cells as (403): a caller by such a name is refused at once, an impersonation of one once it is allowed
 * (so the refusal tells nobody who may not impersonate that the name is special).
 */
export async function admit(
  reviewer: Pick<AccessReviewer, 'allowed'>,
  caller: UserInfo,
  request: ClientRequest,
  span: Span,
  componentUsers: Pick<ComponentUsers, 'has'> = NO_COMPONENT_USERS,
): Promise<Admission> {
  if (componentUsers.has(caller.username)) return { refusal: componentNameRefusal(caller.username) };
  const asked = requestedImpersonation(request.rawHeaders);
  let effective = caller;
  if (asked) {
    let decided: Awaited<ReturnType<typeof authorizeImpersonation>>;
    try {
      decided = await authorizeImpersonation(reviewer, caller, asked);
    } catch (error) {
      if (error instanceof AccessReviewsBusy) return { refusal: tooManyRefusal('impersonation-busy') };
      const status = serviceUnavailable(
        `the router could not check the impersonation (${publicErrorMessage(error)}); retry`,
        1,
      );
      return { refusal: { ...refusal(status, 'impersonation-unavailable'), headers: RETRY_SOON } };
    }
    if ('invalid' in decided)
      return { refusal: refusal(badRequest(decided.invalid), 'impersonation-invalid') };
    if ('denied' in decided) return { refusal: refusal(forbidden(decided.denied), 'impersonation-denied') };
    effective = decided.user;
    if (componentUsers.has(effective.username)) return { refusal: componentNameRefusal(effective.username) };
    const unsafe = unsafeIdentityField(effective);
    if (unsafe)
      return {
        refusal: refusal(
          badRequest(
            `the impersonated ${unsafe} holds a control character or a space at either end, which the router cannot send on as it is`,
          ),
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
