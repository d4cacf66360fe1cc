import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { PeerCertificate, TLSSocket } from 'node:tls';

import type { KubeClient } from '@cellfed/controller-kit';
import type { Clock } from '@cellfed/controller-kit';
import { realClock } from '@cellfed/controller-kit';

import type { UserInfo } from './user-info.ts';

export interface AuthenticatorOptions {
  /** TokenReviews go here: the router control plane. */
  controlPlane: Pick<KubeClient, 'request'>;
  clock?: Clock;
  /** How long a TokenReview answer is reused. Default 10 s (kube-apiserver's webhook cache is 2 min). */
  tokenCacheMs?: number;
}

export type Authentication = { user: UserInfo } | { failure: string };

interface TokenReview {
  status?: {
    authenticated?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    error?: string;
  };
}

/**
 * Who sent a request: a client certificate verified against the configured CA (CN is the user, O the
 * groups, as kube-apiserver reads them), or a bearer token the control plane vouches for (TokenReview).
 * Anonymous requests are refused.
 */
export class Authenticator {
  private readonly options: AuthenticatorOptions;
  private readonly clock: Clock;
  private readonly tokens = new Map<string, { at: number; result: Authentication }>();
  private readonly certificateUsers = new WeakMap<object, UserInfo | null>();

  constructor(options: AuthenticatorOptions) {
    this.options = options;
    this.clock = options.clock ?? realClock;
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
    if (match) return this.reviewToken(match[1]!);
    return { failure: 'no client certificate signed by a trusted CA and no bearer token' };
  }

  private async reviewToken(token: string): Promise<Authentication> {
    // The cache is keyed by a hash: tokens never sit in memory longer than their request, nor in logs.
    const id = createHash('sha256').update(token).digest('hex');
    const now = this.clock.now();
    const cached = this.tokens.get(id);
    if (cached && now - cached.at < (this.options.tokenCacheMs ?? 10_000)) return cached.result;
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
      return { failure: `could not review the token: ${(error as Error).message}` };
    }
    this.tokens.set(id, { at: now, result });
    if (this.tokens.size > 10_000) this.tokens.delete(this.tokens.keys().next().value!);
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
