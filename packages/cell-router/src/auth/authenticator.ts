import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { PeerCertificate, TLSSocket } from 'node:tls';

import { realClock, type Clock, type KubeClient } from '@cellfed/controller-kit';

import { ExpiringCache } from './expiring-cache.ts';
import { FairQueue } from './fair-queue.ts';

import type { UserInfo } from './user-info.ts';

export interface AuthenticatorOptions {
  /** TokenReviews go here: the router control plane. */
  controlPlane: Pick<KubeClient, 'request'>;
  clock?: Clock;
  /** How long a TokenReview's yes is reused. Default 10 s (kube-apiserver's own token cache). */
  tokenCacheMs?: number;
  /** How long a TokenReview's no is reused. Default 5 s. */
  rejectedTokenCacheMs?: number;
  /** At most this many TokenReviews at once. Default 32. */
  maxReviewsInFlight?: number;
  /**
   * Reviews one flow may have waiting for their turn (a flow: a client address for tokens never accepted,
   * the token itself for one accepted before); past it, a 429. Default 64.
   */
  maxReviewsWaitingPerFlow?: number;
  /** How long a token accepted once is known, so that its next review goes in a flow of its own. Default 5 min. */
  knownTokenMs?: number;
  /**
   * Tokens one client address may have rejected per `rejectedTokenCacheMs`; past it, its tokens never seen
   * get a 429 without a review until the period ends (its known tokens are still reviewed). Default 64.
   */
  maxRejectedPerPeer?: number;
  /** Told of each TokenReview sent (not answered from a cache). */
  onReview?: () => void;
}

/**
 * Who the caller is; why not (401); or that it cannot be told now: too many reviews in flight (a 429), or
 * the control plane could not be asked (a 503). Both are worth a retry, which a 401 is not.
 */
export type Authentication =
  { user: UserInfo } | { failure: string } | { busy: string } | { unavailable: string };

interface TokenReview {
  status?: {
    authenticated?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    error?: string;
  };
}

/** A token longer than this is not sent for review (service-account JWTs are about 1 KiB). */
const MAX_TOKEN_BYTES = 16 * 1024;

/**
 * Who sent a request: a client certificate verified against the configured CA (CN is the user, O the
 * groups, as kube-apiserver reads them), or a bearer token the control plane vouches for (TokenReview).
 * Anonymous requests are refused. Reviews are what an unauthenticated caller can make the router send as
 * itself, so they are bounded and shared fairly: answers cached (yes and no apart, each cache bounded, so a
 * spray of bad tokens cannot push the good ones out; a yes never used past its time, however busy the
 * reviews are, so a revoked token stops working), one review per token at a time, a cap on reviews in
 * flight, taken in turn by flow (auth/fair-queue.ts): a token never accepted waits in its client address's
 * flow, one accepted before in its own, so a flood of made-up tokens delays nobody else's review by more
 * than a turn.
 */
export class Authenticator {
  private readonly options: AuthenticatorOptions;
  /** A yes, with when it stops being fresh: kept past that (stale) for when no review can be sent. */
  private readonly accepted: ExpiringCache<{ result: Authentication; freshUntil: number }>;
  private readonly clock: Clock;
  private readonly reviews: FairQueue;
  private readonly rejected: ExpiringCache<Authentication>;
  /** Rejections per client address in the current period: what made-up tokens may cost the control plane. */
  private readonly rejections: ExpiringCache<{ count: number }>;
  private readonly pending = new Map<string, Promise<Authentication>>();
  private readonly certificateUsers = new WeakMap<object, UserInfo | null>();

  constructor(options: AuthenticatorOptions) {
    this.options = options;
    const clock = (this.clock = options.clock ?? realClock);
    this.accepted = new ExpiringCache({ clock, maxEntries: 10_000 });
    this.rejected = new ExpiringCache({ clock, maxEntries: 1_000 });
    this.rejections = new ExpiringCache({ clock, maxEntries: 10_000 });
    this.reviews = new FairQueue({
      concurrency: options.maxReviewsInFlight ?? 32,
      maxWaitingPerKey: options.maxReviewsWaitingPerFlow ?? 64,
    });
  }

  async authenticate(request: Pick<IncomingMessage, 'headers' | 'socket'>): Promise<Authentication> {
    const socket = request.socket as Partial<TLSSocket>;
    if (socket.authorized && socket.getPeerCertificate) {
      // A connection's certificate does not change: read it once per connection, not per request.
      let user = this.certificateUsers.get(socket);
      if (user === undefined) {
        user = userOfCertificate(socket.getPeerCertificate());
        this.certificateUsers.set(socket, user);
      }
      if (user) return { user };
    }
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (match) return this.reviewToken(match[1]!, request.socket?.remoteAddress ?? '');
    return { failure: 'no client certificate signed by a trusted CA and no bearer token' };
  }

  private async reviewToken(token: string, peer: string): Promise<Authentication> {
    if (token.length > MAX_TOKEN_BYTES) return { failure: 'token rejected: too long' };
    // Keyed by a hash: tokens never sit in memory longer than their request, nor in logs.
    const id = createHash('sha256').update(token).digest('hex');
    const accepted = this.accepted.get(id);
    if (accepted && accepted.freshUntil > this.clock.now()) return accepted.result;
    const rejected = this.rejected.get(id);
    if (rejected) return rejected;
    let review = this.pending.get(id);
    if (!review) {
      // A token accepted before (its yes gone stale) is its own flow; any other waits with its address's.
      const flow = accepted ? `token:${id}` : `peer:${peer}`;
      if (!accepted && (this.rejections.get(peer)?.count ?? 0) >= (this.options.maxRejectedPerPeer ?? 64))
        return { busy: 'too many rejected tokens from this client; retry later' };
      const queued = this.reviews.run(flow, () => this.review(id, token, peer));
      if (!queued) return { busy: 'too many token reviews waiting from this client' };
      review = queued.finally(() => this.pending.delete(id));
      this.pending.set(id, review);
    }
    return review;
  }

  private async review(id: string, token: string, peer: string): Promise<Authentication> {
    this.options.onReview?.();
    let result: Authentication;
    try {
      const review = await this.options.controlPlane.request<TokenReview>(
        'POST',
        '/apis/authentication.k8s.io/v1/tokenreviews',
        {
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
        },
      );
      const user = review.status?.user;
      result =
        review.status?.authenticated && user?.username
          ? {
              user: {
                username: user.username,
                ...(user.uid ? { uid: user.uid } : {}),
                groups: user.groups ?? [],
                extra: user.extra ?? {},
              },
            }
          : { failure: review.status?.error ? `token rejected: ${review.status.error}` : 'token rejected' };
    } catch (error) {
      // Not cached: the next request asks again.
      return { unavailable: `could not review the token: ${(error as Error).message}` };
    }
    if ('user' in result) {
      const freshMs = this.options.tokenCacheMs ?? 10_000;
      this.accepted.set(
        id,
        { result, freshUntil: this.clock.now() + freshMs },
        Math.max(freshMs, this.options.knownTokenMs ?? 300_000),
      );
    } else {
      const period = this.options.rejectedTokenCacheMs ?? 5_000;
      this.rejected.set(id, result, period);
      // Counted per period from the first rejection: the entry is not renewed by later ones.
      const counted = this.rejections.get(peer);
      if (counted) counted.count++;
      else this.rejections.set(peer, { count: 1 }, period);
    }
    return result;
  }
}

/** The extra kube-apiserver gives every authenticated request with the credential that proved it. */
export const CREDENTIAL_ID_EXTRA = 'authentication.kubernetes.io/credential-id';

/**
 * As kube-apiserver reads a client certificate: CN is the user, O the groups, and the certificate's SHA-256
 * (of its DER bytes) its credential id, so that `kubectl auth whoami` and audit logs through the router say
 * what they say without it. Null without a CN.
 */
export function userOfCertificate(certificate: Pick<PeerCertificate, 'subject' | 'raw'>): UserInfo | null {
  const cn = certificate.subject?.CN;
  if (typeof cn !== 'string' || cn === '') return null;
  const organisations = certificate.subject.O;
  const groups =
    organisations === undefined ? [] : Array.isArray(organisations) ? organisations : [organisations];
  const extra: Record<string, string[]> = certificate.raw
    ? { [CREDENTIAL_ID_EXTRA]: [`X509SHA256=${createHash('sha256').update(certificate.raw).digest('hex')}`] }
    : {};
  return { username: cn, groups: [...groups, 'system:authenticated'], extra };
}
