import { realClock, type Clock, type KubeClient } from '@cellfed/controller-kit';

import { flowOf } from './caller-keys.ts';
import { ExpiringCache } from './expiring-cache.ts';
import { FairQueue } from './fair-queue.ts';
import type { UserInfo } from './user-info.ts';

/** What a SubjectAccessReview asks: a verb on a resource (or a subresource) or on a non-resource path. */
export type AccessAttributes =
  | {
      readonly verb: string;
      readonly group: string;
      readonly resource: string;
      readonly subresource?: string;
      readonly namespace?: string;
      readonly name?: string;
    }
  | { readonly verb: string; readonly path: string };

export interface AccessReviewerOptions {
  /** Where the reviews go: the apiserver whose RBAC decides. */
  readonly apiserver: Pick<KubeClient, 'request'>;
  readonly clock?: Clock;
  /** How long an allowed answer is reused (kube-apiserver's webhook authorizer: 5 min; here shorter). */
  readonly allowedTtlMs?: number;
  /** How long a denied answer is reused (the webhook authorizer's default, 30 s). */
  readonly deniedTtlMs?: number;
  readonly maxEntries?: number;
  /** Reviews sent at once at most; the others wait their turn by caller (auth/fair-queue.ts). Default 64. */
  readonly maxInFlight?: number;
  /**
   * Reviews one caller (a user, or every ServiceAccount of a namespace) may have waiting; past it
   * {@link AccessReviewsBusy} is thrown (a 429). Default 128.
   */
  readonly maxWaitingPerCaller?: number;
  /** Told of each review sent (not answered from the cache). */
  readonly onReview?: () => void;
}

/** Above this many bytes of caller-chosen text a decision is not cached (as kube-apiserver's webhook cache). */
const MAX_CACHED_KEY_BYTES = 10_000;

/** No review could be sent now: the caller has too many waiting. It is told to retry (429). */
export class AccessReviewsBusy extends Error {
  override readonly name = 'AccessReviewsBusy';
}

interface SubjectAccessReview {
  status?: { allowed?: boolean };
}

/**
 * Asks an apiserver whether a user may do something (SubjectAccessReview), before the router does anything
 * for that user: answers are cached briefly, in a bounded cache, as kube-apiserver's webhook authorizer
 * caches them, so a burst of requests costs one review; a failed review is not cached, and throws. Reviews
 * in flight are capped and taken in turn by caller (a user, or a namespace's ServiceAccounts), so one
 * caller's burst of uncacheable questions delays another's by a turn, never locks it out; past its queue a
 * caller gets {@link AccessReviewsBusy}.
 */
export class AccessReviewer {
  private readonly options: AccessReviewerOptions;
  private readonly decisions: ExpiringCache<boolean>;
  private readonly pending = new Map<string, Promise<boolean>>();
  private readonly reviews: FairQueue;

  constructor(options: AccessReviewerOptions) {
    this.options = options;
    this.reviews = new FairQueue({
      concurrency: options.maxInFlight ?? 64,
      maxWaitingPerKey: options.maxWaitingPerCaller ?? 128,
    });
    this.decisions = new ExpiringCache({
      clock: options.clock ?? realClock,
      maxEntries: options.maxEntries ?? 8192,
    });
  }

  /** Whether `user` may: true or false as the apiserver decided; throws if it could not be asked. */
  async allowed(user: UserInfo, attributes: AccessAttributes): Promise<boolean> {
    const spec = {
      user: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups,
      extra: user.extra,
      // The attributes go as they are: accessAttributes and the impersonation checks leave out what is empty.
      ...('path' in attributes ? { nonResourceAttributes: attributes } : { resourceAttributes: attributes }),
    };
    const key = JSON.stringify(spec);
    const cacheable = key.length < MAX_CACHED_KEY_BYTES;
    const cached = cacheable ? this.decisions.get(key) : undefined;
    if (cached !== undefined) return cached;
    // Concurrent requests for the same decision share one review.
    let review = this.pending.get(key);
    if (!review) {
      const queued = this.reviews.run(flowOf(user), () => this.review(spec));
      if (!queued) throw new AccessReviewsBusy('too many authorization reviews waiting for this caller');
      review = queued.finally(() => this.pending.delete(key));
      this.pending.set(key, review);
    }
    const allowed = await review;
    if (cacheable)
      this.decisions.set(
        key,
        allowed,
        allowed ? (this.options.allowedTtlMs ?? 30_000) : (this.options.deniedTtlMs ?? 30_000),
      );
    return allowed;
  }

  private async review(spec: Record<string, unknown>): Promise<boolean> {
    this.options.onReview?.();
    const review = await this.options.apiserver.request<SubjectAccessReview>(
      'POST',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      { body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } },
    );
    return review.status?.allowed === true;
  }
}
