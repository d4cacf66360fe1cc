/**
 * Every error @cellfed/federation throws has a stable `code`; match on the code, never on the message. Like
 * @cellfed/api it depends on no runtime package, so its error stands alone rather than on controller-kit's
 * `CodedError` (same shape: `name`, `code`, `message`).
 */

/** Stable error codes. New codes may be added; existing ones never change meaning. */
export const FederationErrorCode = {
  /** A key is not of its codec's shape (`cell/namespace/name`, `deployments.apps/namespace/name`, …). */
  InvalidKey: 'CELLFED_FEDERATION_INVALID_KEY',
  /** A Kubernetes resource quantity (`500m`, `2Gi`) that is not one. */
  BadQuantity: 'CELLFED_FEDERATION_BAD_QUANTITY',
} as const;

export type FederationErrorCode = (typeof FederationErrorCode)[keyof typeof FederationErrorCode];

export class FederationError extends Error {
  override readonly name = 'FederationError';
  readonly code: FederationErrorCode;

  constructor(code: FederationErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
