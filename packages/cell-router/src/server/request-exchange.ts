import { errorMessage } from '@cellfed/controller-kit';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';

import { admit, authenticateCaller, tooManyRefusal } from '../auth/admission.ts';
import type { AccessReviewer } from '../auth/access-reviewer.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ComponentUsers } from '../auth/component-users.ts';
import { requestAuthorization, type Authorize } from '../auth/request-authorization.ts';
import type { RouterMetrics } from '../metrics/router-metrics.ts';
import type { RequestInfo } from '../request/request-info.ts';
import { refusal, type Refusal } from '../routing/destination.ts';
import { badRequest, internalError } from '../status/kube-status.ts';
import { publicErrorMessage } from '../status/public-error.ts';
import { callerKeys } from '../auth/caller-keys.ts';
import type { CallerLimits } from './caller-limits.ts';
import { isLongRunning } from './long-running.ts';
import { RequestBody, type BodyHolding } from './request-body.ts';
import { startRequestSpan } from '../tracing/request-span.ts';
import { logFields, recordRequest, requestInfo } from './access-log.ts';
import { type ClientRequest } from './client-request.ts';
import { type RequestOutcome } from './request-outcome.ts';
import { type Impersonation } from '../auth/impersonation.ts';

/** How one request's answer reaches its caller: an HTTP response, or an upgrade's socket. */
export interface Answerer {
  /** Sends a refusal (a Kubernetes Status). */
  refuse(refusal: Refusal): RequestOutcome;
  /** Whether the caller went away: nobody is left to answer. */
  callerGone(): boolean;
  /** After a failure: the 500 Status if nothing was answered yet, else the answer cut short. */
  fail(status: Refusal): RequestOutcome;
  /** Once the request is over, whatever happened. */
  finish?(): void;
}

export interface ExchangeOptions {
  readonly authenticator: Pick<Authenticator, 'authenticate'>;
  /** Decides the impersonations callers ask for (SubjectAccessReviews against the control plane). */
  readonly reviewer: Pick<AccessReviewer, 'allowed'>;
  /** What one caller may hold open at once; none: no limit. */
  readonly limits?: CallerLimits | undefined;
  /** The names cellfed's components call the cells as: no request reaches a cell as one (403). */
  readonly componentUsers?: Pick<ComponentUsers, 'has'> | undefined;
  /** How request bodies are held (a budget, and how much is read before the caller is authorized). */
  readonly bodies?: BodyHolding | undefined;
  readonly tracer: Tracer;
  readonly logger: Logger;
  readonly metrics?: RouterMetrics | undefined;
}

/** What the serving stage gets of an admitted caller besides its impersonation and its request's authorization. */
export interface Admitted {
  readonly body: RequestBody;
  /** Whether the caller may make another request than its own (a check of the router's own, by its attributes). */
  readonly authorizeFor: (info: RequestInfo) => Authorize;
}

/** Bodies read with no budget and no authorization first (a router built without them: tests). */
const UNBOUNDED: BodyHolding = { unauthorizedBytes: Number.POSITIVE_INFINITY };

/** What the serving stage may note while it works, so a failure is logged with where it was going. */
export interface Progress {
  outcome: RequestOutcome;
}

/**
 * One request, start to end, the same for HTTP requests and upgrades: its path parsed (a bad one: 400),
 * a server span, the caller admitted (401, 403) and held to its limits (429), then `serve`; a failure answered with a 500 Status, or
 * logged as the caller's leaving (499); then one access-log line with the cell and the object, and the
 * metrics (access-log.ts).
 */
export async function exchange(
  options: ExchangeOptions,
  request: ClientRequest,
  answerer: Answerer,
  serve: (
    info: RequestInfo,
    impersonation: Impersonation,
    progress: Progress,
    authorize: Authorize,
    admitted: Admitted,
  ) => Promise<RequestOutcome>,
): Promise<void> {
  const started = performance.now();
  const info = requestInfo(request);
  const span = startRequestSpan(options.tracer, request, info);
  const progress: Progress = { outcome: { code: 500, cell: '', route: 'unhandled' } };
  let user: string | undefined;
  let release: (() => void) | undefined;
  let body: RequestBody | undefined;
  try {
    if (typeof info === 'string') {
      progress.outcome = answerer.refuse(refusal(badRequest(info), 'bad-path'));
      return;
    }
    const caller = await authenticateCaller(options.authenticator, request);
    if ('refusal' in caller) {
      progress.outcome = answerer.refuse(caller.refusal);
      return;
    }
    user = caller.user.username;
    const keys = callerKeys(caller.user);
    // Held to its limits before anything is asked on its behalf (its impersonation's reviews too).
    release = options.limits?.acquire(keys, isLongRunning(request, info));
    if (options.limits && !release) {
      progress.outcome = answerer.refuse(tooManyRefusal('caller-limit'));
      return;
    }
    const admission = await admit(options.reviewer, caller.user, request, span, options.componentUsers);
    if ('refusal' in admission) {
      progress.outcome = answerer.refuse(admission.refusal);
      return;
    }
    const authorize = requestAuthorization(options.reviewer, admission.effective, info);
    body = new RequestBody(request, options.bodies ?? UNBOUNDED, keys, authorize);
    const authorizeFor = (other: RequestInfo) =>
      requestAuthorization(options.reviewer, admission.effective, other);
    progress.outcome = await serve(info, admission.impersonation, progress, authorize, {
      body,
      authorizeFor,
    });
  } catch (error) {
    if (answerer.callerGone()) {
      // Logged as nginx does, 499, and not as the router's own failure.
      options.logger.warn({ err: errorMessage(error), ...logFields(request, info) }, 'caller went away');
      progress.outcome = { code: 499, cell: progress.outcome.cell, route: 'caller-gone' };
    } else {
      options.logger.error({ err: errorMessage(error), ...logFields(request, info) }, 'request failed');
      progress.outcome = answerer.fail(
        refusal(internalError(publicErrorMessage(error)), 'error', progress.outcome.cell),
      );
    }
  } finally {
    body?.release();
    release?.();
    answerer.finish?.();
    recordRequest(options, request, info, user, progress.outcome, started, span);
  }
}
