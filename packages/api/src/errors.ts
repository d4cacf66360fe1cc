/**
 * Every error @cellfed/api throws has a stable `code`; match on the code, never on the message. Like
 * @cellfed/hashing it depends on no other cellfed package, so its error stands alone rather than on
 * controller-kit's `CodedError` (same shape: `name`, `code`, `message`).
 */

/** Stable error codes. New codes may be added; existing ones never change meaning. */
export const ApiErrorCode = {
  /** A CellSet failed validation; see `issues`. */
  InvalidCellSet: 'CELLFED_INVALID_CELLSET',
} as const;

/** One of the {@link ApiErrorCode} values. */
export type ApiErrorCode = (typeof ApiErrorCode)[keyof typeof ApiErrorCode];

/** One problem found while validating input: where (a dotted path such as `spec.cells[1].id`) and what. */
export interface ValidationIssue {
  /** Dotted path of the offending field, e.g. `spec.cells[1].weight`; empty for the document itself. */
  readonly path: string;
  /** What is wrong, for a person. */
  readonly message: string;
}

/** A CellSet (or its spec) that does not validate: one issue per problem. */
export class CellSetError extends Error {
  override readonly name = 'CellSetError';
  readonly code: ApiErrorCode = ApiErrorCode.InvalidCellSet;
  readonly issues: readonly ValidationIssue[];

  constructor(message: string, issues: readonly ValidationIssue[] = []) {
    super(message);
    this.issues = issues;
  }
}
