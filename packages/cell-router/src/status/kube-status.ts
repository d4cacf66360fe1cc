/**
 * Kubernetes `Status` objects: every error the router answers is one, with the code and reason
 * kube-apiserver would use, so kubectl and the client libraries show it (and retry 429s) as usual.
 */
import { sourceName } from '../routing/cell-made-resources.ts';

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  code: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    retryAfterSeconds?: number;
    causes?: { reason?: string; message: string; field?: string }[];
  };
}

/** A Status the router answers itself. */
export function failure(
  code: number,
  reason: string,
  message: string,
  details?: KubeStatus['details'],
): KubeStatus {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
    ...(details ? { details } : {}),
  };
}

export const badRequest = (message: string) => failure(400, 'BadRequest', message);

export const unauthorized = (message = 'Unauthorized') => failure(401, 'Unauthorized', message);

export const forbidden = (message: string) => failure(403, 'Forbidden', message);

export const methodNotAllowed = (message: string) => failure(405, 'MethodNotAllowed', message);

/** kube-apiserver refuses bodies over 3 MiB the same way, in the same words. */
export const requestEntityTooLarge = (limitBytes: number) =>
  failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limitBytes}`);

/**
 * A fenced write (the object is migrating between cells): client-go and client-node wait `Retry-After`
 * seconds and send it again by themselves.
 */
export const tooManyRequests = (message: string, retryAfterSeconds: number, name?: string) =>
  failure(429, 'TooManyRequests', message, { ...(name ? { name } : {}), retryAfterSeconds });

export const internalError = (message: string) => failure(500, 'InternalError', message);

export const serviceUnavailable = (message: string, retryAfterSeconds?: number) =>
  failure(
    503,
    'ServiceUnavailable',
    message,
    retryAfterSeconds === undefined ? undefined : { retryAfterSeconds },
  );

/** An apiserver's answer read as a JSON object; undefined when it is not one. */
export function parseJsonObject(text: string | undefined): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(text ?? '') as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** An apiserver's error answer read as a Status; undefined when it is not JSON. */
export const parseStatus = (text: string | undefined) =>
  parseJsonObject(text) as Partial<KubeStatus> | undefined;

/**
 * A cell's error answer passed on to the client: its code, reason and details, the message naming the cell
 * (and `note`, e.g. what other cells did meanwhile).
 */
export function cellFailure(cell: string, code: number, text: string, note = ''): KubeStatus {
  const status = parseStatus(text);
  return failure(
    code,
    status?.reason ?? 'InternalError',
    `${sourceName(cell)}: ${status?.message ?? text.slice(0, 300)}${note}`,
    status?.details,
  );
}

/** kube-apiserver's `reason` for a status code, for answers that came without one. */
const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/**
 * Whether an apiserver's answer is an error without a Status body (JSON, or protobuf for a client that asked
 * for it, carries one): such an answer is passed on as {@link statusFromText} makes it.
 */
export function isErrorWithoutStatus(code: number, contentType: string | undefined): boolean {
  return code >= 400 && !/json|protobuf/.test(contentType ?? '');
}

/**
 * An apiserver's error that is not a Status (Go's mux answers an unknown path with `404 page not found` as
 * plain text) as one, so every error through the router reads the same way.
 */
export function statusFromText(code: number, text: string): KubeStatus {
  const message = text.trim().slice(0, 1000);
  return failure(
    code,
    REASONS[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest'),
    message || `HTTP ${code}`,
  );
}
