import { ApiError, ControllerKitError, ControllerKitErrorCode, errorMessage } from '@cellfed/controller-kit';

/** Answers a server gives while it restarts, sheds load or loses a backend: worth asking again. */
const RETRIED_STATUS = new Set([429, 500, 502, 503, 504]);

/**
 * Whether a failed read may succeed if asked again: the connection failed (a router replica restarting, a
 * Service without ready endpoints for a moment) or the server answered that it is busy or unavailable. A
 * refusal (401, 403, 404, 422, …) is final.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof ApiError) return RETRIED_STATUS.has(error.statusCode);
  return error instanceof ControllerKitError && error.code === ControllerKitErrorCode.Transport;
}

export interface PatientReadOptions {
  /** Throws once the caller's deadline has passed (the `--wait` timeout). */
  readonly overdue: () => void;
  /** Where each retried failure is told, one line each. */
  readonly report: (line: string) => void;
  readonly sleep: (ms: number) => Promise<unknown>;
  readonly retryAfterMs?: number;
}

/**
 * A read of a `--wait` loop: a transient failure is reported and the read asked again until it answers or
 * the deadline passes, as `kubectl rollout status` outlives a dropped watch; anything else is thrown at once.
 * Only for reads: a write that failed in transit may have landed.
 */
export async function patientRead<T>(read: () => Promise<T>, options: PatientReadOptions): Promise<T> {
  for (;;) {
    try {
      return await read();
    } catch (error) {
      if (!isTransient(error)) throw error;
      options.overdue();
      options.report(`${errorMessage(error)}; asking again`);
      await options.sleep(options.retryAfterMs ?? 1000);
    }
  }
}
