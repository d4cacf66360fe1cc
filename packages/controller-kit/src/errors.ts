/** Stable codes for everything controller-kit fails with. */
export const ControllerKitErrorCode = {
  /** The configuration did not parse; the message lists every problem. */
  InvalidConfig: 'CELLFED_KIT_INVALID_CONFIG',
  /** An apiserver answered with an error Status. */
  ApiError: 'CELLFED_KIT_API_ERROR',
  /** An apiserver could not be reached or the connection broke. */
  Transport: 'CELLFED_KIT_TRANSPORT',
  /** A watch stream sent something that is not a watch event. */
  WatchDecode: 'CELLFED_KIT_WATCH_DECODE',
  /** A cell's kubeconfig Secret is missing, lacks the key, or holds an unusable kubeconfig. */
  CellCredentials: 'CELLFED_KIT_CELL_CREDENTIALS',
  /** A reconcile ran past its timeout. */
  ReconcileTimeout: 'CELLFED_KIT_RECONCILE_TIMEOUT',
} as const;

export type ControllerKitErrorCode = (typeof ControllerKitErrorCode)[keyof typeof ControllerKitErrorCode];

/**
 * An error with a stable code (`CELLFED_<PACKAGE>_<WHAT>`): the base of each package's own error in its
 * `errors.ts`. Logs, metrics and callers match the code, never the message.
 */
export class CodedError<Code extends string = string> extends Error {
  override readonly name: string = 'CodedError';
  readonly code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export class ControllerKitError extends CodedError<ControllerKitErrorCode> {
  override readonly name: string = 'ControllerKitError';
}

/**
 * Thrown by a reconciler when retrying cannot help (the object is invalid, a precondition will never hold).
 * The runner logs it, counts it and forgets the key instead of retrying with backoff.
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

/** Error-like text of anything thrown. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
