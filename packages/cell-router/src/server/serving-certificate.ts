import { errorMessage, realClock, sleep, type Clock, type KubeClient } from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import { RouterError, RouterErrorCode } from '../errors.ts';

/** The router's serving certificate and key, PEM. */
export interface ServingCertificate {
  readonly cert: string;
  readonly key: string;
}

interface Secret {
  type?: string;
  data?: Record<string, string>;
}

/** Reads a kubernetes.io/tls Secret (`namespace/name`) from the control plane; a readable error if unusable. */
export async function readTlsSecret(
  client: Pick<KubeClient, 'request'>,
  ref: string,
): Promise<ServingCertificate> {
  const [namespace, name] = ref.split('/') as [string, string];
  let secret: Secret;
  try {
    secret = await client.request<Secret>('GET', `/api/v1/namespaces/${namespace}/secrets/${name}`);
  } catch (error) {
    throw new RouterError(RouterErrorCode.TlsSecret, `TLS Secret ${ref}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  const field = (key: string) => {
    const value = secret.data?.[key];
    if (!value) throw new RouterError(RouterErrorCode.TlsSecret, `TLS Secret ${ref} has no ${key}`);
    return Buffer.from(value, 'base64').toString('utf8');
  };
  return { cert: field('tls.crt'), key: field('tls.key') };
}

/**
 * Re-reads the Secret every `intervalMs` until `signal` aborts and hands a changed certificate to `apply`
 * (cert-manager renews in place; the router serves the new one without a restart). A failed read keeps the
 * current certificate.
 */
export async function followTlsSecret(options: {
  client: Pick<KubeClient, 'request'>;
  ref: string;
  current: ServingCertificate;
  apply: (certificate: ServingCertificate) => void;
  signal: AbortSignal;
  logger: Logger;
  clock?: Clock;
  intervalMs?: number;
}): Promise<void> {
  const clock = options.clock ?? realClock;
  let current = options.current;
  for (;;) {
    await sleep(clock, options.intervalMs ?? 60_000, options.signal);
    if (options.signal.aborted) return;
    try {
      const next = await readTlsSecret(options.client, options.ref);
      if (next.cert === current.cert && next.key === current.key) continue;
      options.apply(next);
      current = next;
      options.logger.info({ secret: options.ref }, 'serving certificate renewed from its Secret');
    } catch (error) {
      options.logger.warn(
        { secret: options.ref, err: errorMessage(error) },
        'TLS Secret not read; keeping the current certificate',
      );
    }
  }
}
