/**
 * Every error @cellfed/hashing throws is a `HashingError` with a stable `code`; match on the code, never on
 * the message. CellSet validation errors also carry one issue per problem, each with the path it concerns.
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
  /** A CellSet failed validation; see `issues`. */
  InvalidCellSet: 'CELLFED_INVALID_CELLSET',
  /** An object reference has no usable name. */
  InvalidObjectRef: 'CELLFED_INVALID_OBJECT_REF',
} as const;

/** One of the {@link HashingErrorCode} values. */
export type HashingErrorCode = (typeof HashingErrorCode)[keyof typeof HashingErrorCode];

/** One problem found while validating input: where (a dotted path such as `spec.cells[1].id`) and what. */
export interface ValidationIssue {
  /** Dotted path of the offending field, e.g. `spec.cells[1].weight`; empty for the document itself. */
  readonly path: string;
  /** What is wrong, for a person. */
  readonly message: string;
}

/** The error type of this package. */
export class HashingError extends Error {
  override readonly name = 'HashingError';

  /**
   * @param code - stable machine-readable code
   * @param message - a sentence for a person
   * @param issues - for validation errors, one entry per problem
   */
  constructor(
    readonly code: HashingErrorCode,
    message: string,
    readonly issues: readonly ValidationIssue[] = [],
  ) {
    super(message);
  }
}
