/**
 * Every error @cellfed/hashing throws is a `HashingError` with a stable `code`; match on the code, never on
 * the message.
 */

/** Stable error codes. New codes may be added; existing ones never change meaning. */
export const HashingErrorCode = {
  /** A ring was built with no cells. */
  EmptyRing: 'CELLFED_EMPTY_RING',
  /** Two cells of one ring share an id. */
  DuplicateCell: 'CELLFED_DUPLICATE_CELL',
  /** A cell id is empty or not a string. */
  InvalidCellId: 'CELLFED_INVALID_CELL_ID',
  /** A weight is not an integer in the allowed range. */
  InvalidWeight: 'CELLFED_INVALID_WEIGHT',
  /** A ring option is out of range. */
  InvalidRingOption: 'CELLFED_INVALID_RING_OPTION',
  /** The ring would have more points than a ring may hold. */
  RingTooLarge: 'CELLFED_RING_TOO_LARGE',
  /** An object reference has no usable name. */
  InvalidObjectRef: 'CELLFED_INVALID_OBJECT_REF',
} as const;

/** One of the {@link HashingErrorCode} values. */
export type HashingErrorCode = (typeof HashingErrorCode)[keyof typeof HashingErrorCode];

/** The error type of this package. */
export class HashingError extends Error {
  override readonly name = 'HashingError';

  /**
   * @param code - stable machine-readable code
   * @param message - a sentence for a person
   */
  constructor(
    readonly code: HashingErrorCode,
    message: string,
  ) {
    super(message);
  }
}
