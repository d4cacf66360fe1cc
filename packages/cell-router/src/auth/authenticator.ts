import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { PeerCertificate, TLSSocket } from 'node:tls';

import { realClock, type Clock, type KubeClient } from '@cellfed/controller-kit';

import { ExpiringCache } from './expiring-cache.ts';

import type { UserInfo } from './user-info.ts';

export interface AuthenticatorOptions {
  /** TokenReviews go here: the router control plane. */
  controlPlane: Pick<KubeClient, 'request'>;
  clock?: Clock;
  /** How long a TokenReview's yes is reused. Default 10 s (kube-apiserver's own token cache). */
  tokenCacheMs?: number;
  /** How long a TokenReview's no is reused. Default 5 s. */
  rejectedTokenCacheMs?: number;
  /** At most this many TokenReviews at once; a token past it waits for a retry (429). Default 32. */
  maxReviewsInFlight?: number;
  /**
   * Of them, at most this many for one client address, so nobody holds them all: half, by default (16), as
   * many clients may share one address behind a NAT or a proxy.
   */
  maxReviewsInFlightPerPeer?: number;
  /**
   * How long a yes is still used when no review can be sent now (the cap is reached): a known caller is not
   * turned away by someone else's flood of made-up tokens. Default 5 min.
   */
  staleTokenMs?: number;
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
 * itself, so they are bounded: answers cached (yes and no apart, each cache bounded, so a spray of bad
 * tokens cannot push the good ones out), one review per token at a time, a cap on reviews in flight.
 */
export class Authenticator {
  private readonly options: AuthenticatorOptions;
  /** A yes, with when it stops being fresh: kept past that (stale) for when no review can be sent. */
  private readonly accepted: ExpiringCache<{ result: Authentication; freshUntil: number }>;
  private readonly clock: Clock;
  private readonly pendingPerPeer = new Map<string, number>();
  private readonly rejected: ExpiringCache<Authentication>;
  private readonly pending = new Map<string, Promise<Authentication>>();
  private readonly certificateUsers = new WeakMap<object, UserInfo | null>();

  constructor(options: AuthenticatorOptions) {
    this.options = options;
    const clock = (this.clock = options.clock ?? realClock);
    this.accepted = new ExpiringCache({ clock, maxEntries: 10_000 });
    this.rejected = new ExpiringCache({ clock, maxEntries: 1_000 });
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
      const fromPeer = this.pendingPerPeer.get(peer) ?? 0;
      if (
        this.pending.size >= (this.options.maxReviewsInFlight ?? 32) ||
        fromPeer >= (this.options.maxReviewsInFlightPerPeer ?? 16)
      )
        return accepted?.result ?? { busy: 'too many token reviews in flight' };
      this.pendingPerPeer.set(peer, fromPeer + 1);
      review = this.review(id, token).finally(() => {
        this.pending.delete(id);
        const left = (this.pendingPerPeer.get(peer) ?? 1) - 1;
        if (left > 0) this.pendingPerPeer.set(peer, left);
        else this.pendingPerPeer.delete(peer);
      });
      this.pending.set(id, review);
    }
    return review;
  }

  private async review(id: string, token: string): Promise<Authentication> {
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
        Math.max(freshMs, this.options.staleTokenMs ?? 300_000),
      );
    } else this.rejected.set(id, result, this.options.rejectedTokenCacheMs ?? 5_000);
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
