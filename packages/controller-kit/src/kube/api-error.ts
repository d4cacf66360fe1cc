import { ControllerKitError, ControllerKitErrorCode } from '../errors.ts';

/** The `Status` body an apiserver sends with an error. */
export interface ApiStatus {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: unknown;
}

/** An apiserver's error answer: the HTTP status and the Kubernetes `Status` it carried. */
export class ApiError extends ControllerKitError {
  override readonly name = 'ApiError';
  readonly statusCode: number;
  readonly status: ApiStatus;

  constructor(statusCode: number, status: ApiStatus, what: string) {
    super(
      ControllerKitErrorCode.ApiError,
      `${what}: ${statusCode} ${status.reason ?? ''}${status.message ? `: ${status.message}` : ''}`.trim(),
    );
    this.statusCode = statusCode;
    this.status = status;
  }
}

export const isNotFound = (error: unknown): boolean => error instanceof ApiError && error.statusCode === 404;
export const isConflict = (error: unknown): boolean => error instanceof ApiError && error.statusCode === 409;
export const isAlreadyExists = (error: unknown): boolean =>
  error instanceof ApiError && error.statusCode === 409 && error.status.reason === 'AlreadyExists';
/** The resource version asked for is compacted away ("too old resource version"): relist. */
export const isGone = (error: unknown): boolean =>
  error instanceof ApiError && (error.statusCode === 410 || error.status.code === 410);
